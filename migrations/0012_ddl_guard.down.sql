DROP EVENT TRIGGER IF EXISTS cqlpg_ddl_guard_end;
DROP EVENT TRIGGER IF EXISTS cqlpg_ddl_guard_drop;
DROP FUNCTION IF EXISTS cqlpg.ddl_guard();
DROP FUNCTION IF EXISTS cqlpg.check_layout(text, text);
DROP FUNCTION IF EXISTS cqlpg.record_layout(text);
DROP FUNCTION IF EXISTS cqlpg.layout_now(text);
DROP TABLE IF EXISTS cqlpg.layout;
