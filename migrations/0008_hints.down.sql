DROP TABLE cqlpg.hints;
