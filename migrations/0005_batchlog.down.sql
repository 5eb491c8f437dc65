DROP TABLE cqlpg.batchlog;
