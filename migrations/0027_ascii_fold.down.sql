DROP FUNCTION IF EXISTS cqlpg.ascii_fold(text);
