DROP TABLE cqlpg.gateways;
