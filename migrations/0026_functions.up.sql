-- User-defined functions and aggregates. Their Java bodies run in the
-- gateway's interpreter (translate/udf); the catalog keeps them as
-- system_schema shows them.
CREATE TABLE cqlpg.functions (
    keyspace_name        text NOT NULL REFERENCES cqlpg.keyspaces ON DELETE CASCADE,
    function_name        text NOT NULL,
    argument_types       text[] NOT NULL,
    argument_names       text[] NOT NULL,
    body                 text NOT NULL,
    called_on_null_input boolean NOT NULL,
    language             text NOT NULL,
    return_type          text NOT NULL,
    PRIMARY KEY (keyspace_name, function_name, argument_types)
);
COMMENT ON TABLE cqlpg.functions IS 'CQL user-defined functions, one row per overload; the gateway runs their Java bodies.';

CREATE TABLE cqlpg.aggregates (
    keyspace_name  text NOT NULL REFERENCES cqlpg.keyspaces ON DELETE CASCADE,
    aggregate_name text NOT NULL,
    argument_types text[] NOT NULL,
    state_func     text NOT NULL,
    state_type     text NOT NULL,
    final_func     text,
    initcond       text,
    return_type    text NOT NULL,
    PRIMARY KEY (keyspace_name, aggregate_name, argument_types)
);
COMMENT ON TABLE cqlpg.aggregates IS 'CQL user-defined aggregates: a state function, its state type, a final function and the initial state as a CQL literal.';
