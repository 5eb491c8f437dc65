"""Drives a cqlpg gateway's materialized views, functions and aggregates
with the unmodified DataStax Python driver.

Usage: schema5.py HOST PORT KEYSPACE

Creates KEYSPACE with a table and a view keyed by a regular column,
writes rows and moves one between view keys, and reports what the
driver's metadata shows of the view (refreshed by the schema events of
CREATE and DROP MATERIALIZED VIEW) and the rows read through it; then
the functions and aggregate the drivers' suites define, their metadata
and their results. It
prints one JSON report on stdout; on any failure it prints the traceback
on stderr and exits 1.
"""

import json
import logging
import sys
import time
import traceback

from cassandra.cluster import Cluster


class Warnings(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def wait_for(what, check):
    deadline = time.time() + 10
    while not check():
        if time.time() > deadline:
            raise AssertionError("metadata never showed " + what)
        time.sleep(0.05)


def main(host, port, ks):
    warnings = Warnings()
    logging.getLogger("cassandra").addHandler(warnings)
    cluster = Cluster([host], port=int(port))
    session = cluster.connect()
    report = {}
    session.execute("CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % ks)
    session.execute("CREATE TABLE %s.scores (user text, game text, score int, at timestamp, PRIMARY KEY (user, game))" % ks)
    result = session.execute("CREATE MATERIALIZED VIEW %s.by_score AS SELECT user, game, score FROM %s.scores "
                             "WHERE score IS NOT NULL AND user IS NOT NULL AND game IS NOT NULL "
                             "PRIMARY KEY (game, score, user) WITH CLUSTERING ORDER BY (score DESC, user ASC)" % (ks, ks))
    report["create_warnings"] = result.response_future.warnings or []
    meta = cluster.metadata.keyspaces[ks]
    wait_for("the view", lambda: "by_score" in meta.views)
    view = meta.views["by_score"]
    report["view"] = {
        "base_table_name": view.base_table_name,
        "where_clause": view.where_clause,
        "include_all_columns": view.include_all_columns,
        "partition_key": [c.name for c in view.partition_key],
        "clustering_key": [c.name for c in view.clustering_key],
        "columns": list(view.columns),
        "cql": view.as_cql_query(),
        "on_table": sorted(meta.tables["scores"].views),
        "tables": sorted(meta.tables),
    }
    for user, game, score in [("ann", "chess", 10), ("bob", "chess", 30), ("cid", "chess", 20), ("ann", "go", 5)]:
        session.execute("INSERT INTO %s.scores (user, game, score) VALUES (%%s, %%s, %%s)" % ks, (user, game, score))
    session.execute("UPDATE %s.scores SET score = 40 WHERE user = 'ann' AND game = 'chess'" % ks)
    read = session.prepare("SELECT user, score FROM %s.by_score WHERE game = ?" % ks)
    report["chess"] = [[r.user, r.score] for r in session.execute(read, ["chess"])]
    report["top"] = [[r.user, r.score] for r in session.execute(
        "SELECT user, score FROM %s.by_score WHERE game = 'chess' AND score > 15 LIMIT 2" % ks)]
    session.execute("DROP MATERIALIZED VIEW %s.by_score" % ks)
    wait_for("the view dropped", lambda: "by_score" not in cluster.metadata.keyspaces[ks].views)
    report["after_drop"] = sorted(cluster.metadata.keyspaces[ks].views)
    # The drivers' own average, and a string function.
    session.execute("CREATE FUNCTION %s.avgstate(state tuple<int, bigint>, val int) CALLED ON NULL INPUT "
                    "RETURNS tuple<int, bigint> LANGUAGE java AS 'if (val != null) { state.setInt(0, state.getInt(0) + 1); "
                    "state.setLong(1, state.getLong(1) + val.intValue()); } return state;'" % ks)
    session.execute("CREATE FUNCTION %s.avgfinal(state tuple<int, bigint>) CALLED ON NULL INPUT RETURNS double LANGUAGE java AS "
                    "'double r = 0; if (state.getInt(0) == 0) return null; r = state.getLong(1); r /= state.getInt(0); "
                    "return Double.valueOf(r);'" % ks)
    session.execute("CREATE AGGREGATE %s.average(int) SFUNC avgstate STYPE tuple<int, bigint> FINALFUNC avgfinal "
                    "INITCOND (0, 0)" % ks)
    session.execute("CREATE FUNCTION %s.initials(name text) RETURNS NULL ON NULL INPUT RETURNS text LANGUAGE java AS "
                    "$$ return name.substring(0, 1).toUpperCase(); $$" % ks)
    meta = cluster.metadata.keyspaces[ks]
    wait_for("the aggregate", lambda: len(cluster.metadata.keyspaces[ks].aggregates) == 1 and
             len(cluster.metadata.keyspaces[ks].functions) == 3)
    meta = cluster.metadata.keyspaces[ks]
    agg = list(meta.aggregates.values())[0]
    report["functions"] = sorted(meta.functions)
    report["aggregate"] = {"name": agg.name, "argument_types": list(agg.argument_types), "state_func": agg.state_func,
                           "state_type": agg.state_type, "final_func": agg.final_func,
                           "initial_condition": agg.initial_condition, "return_type": agg.return_type}
    report["function_cql"] = [f.as_cql_query() for f in meta.functions.values() if f.name == "initials"][0]
    report["average"] = [list(r) for r in session.execute("SELECT %s.average(score) FROM %s.scores" % (ks, ks))]
    report["initials"] = sorted(r[0] for r in session.execute("SELECT %s.initials(user) FROM %s.scores" % (ks, ks)))
    # Vector search: the driver predates the vector type, so vectors go in
    # as literals and come back as similarities.
    session.execute("CREATE TABLE %s.docs (id int PRIMARY KEY, title text, v vector<float, 3>)" % ks)
    session.execute("CREATE INDEX docs_v ON %s.docs (v) USING 'sai' WITH OPTIONS = {'similarity_function': 'cosine'}" % ks)
    for i, vec in enumerate(["[1, 0, 0]", "[0.9, 0.1, 0]", "[0, 1, 0]", "[0, 0, 1]"]):
        session.execute("INSERT INTO %s.docs (id, title, v) VALUES (%d, 'doc%d', %s)" % (ks, i, i, vec))
    report["nearest"] = [[r[0], round(r[1], 4)] for r in session.execute(
        "SELECT id, similarity_cosine(v, [1, 0, 0]) FROM %s.docs ORDER BY v ANN OF [1, 0, 0] LIMIT 2" % ks)]
    session.execute("DROP AGGREGATE %s.average" % ks)
    wait_for("the aggregate dropped", lambda: len(cluster.metadata.keyspaces[ks].aggregates) == 0)
    session.execute("DROP KEYSPACE %s" % ks)
    report["warnings"] = warnings.messages
    cluster.shutdown()
    print(json.dumps(report))


if __name__ == "__main__":
    try:
        main(*sys.argv[1:])
    except Exception:
        traceback.print_exc()
        sys.exit(1)
