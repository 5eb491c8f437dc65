DROP TABLE cqlpg.lwt_ballot;
