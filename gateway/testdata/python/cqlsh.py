"""Connects to a cqlpg gateway as cqlsh 6 (Cassandra 4.1) does, with the
DataStax Python driver it embeds, and runs its DESCRIBE commands.

Usage: cqlsh.py HOST PORT KEYSPACE [PROTOCOL_VERSION]

Without PROTOCOL_VERSION the driver negotiates, as cqlsh does unless
--protocol-version is given. cqlsh's connection: a Cluster on one contact
point with a white-list load balancing policy, dictionary rows, its version
query on system.local, the driver's full schema metadata at connect. Then
DESCRIBE statements sent to the server, as cqlsh 6 sends them to Cassandra
4.x, at LOCAL_ONE and cqlsh's page size, and the driver's client-side
export_as_string, which older cqlsh versions print. It prints one JSON
report on stdout; on any failure it prints the traceback on stderr and
exits 1.
"""

import json
import logging
import sys
import traceback

from cassandra import ConsistencyLevel, InvalidRequest
from cassandra.cluster import Cluster
from cassandra.policies import WhiteListRoundRobinPolicy
from cassandra.query import SimpleStatement, ordered_dict_factory

# The sibling driver.py's handler of the driver's log records.
from driver import Warnings

# cqlsh's default page size.
PAGE_SIZE = 100


def describe(session, cql):
    """Runs a DESCRIBE as cqlsh's do_describe does and returns its rows."""
    stmt = SimpleStatement(cql, consistency_level=ConsistencyLevel.LOCAL_ONE, fetch_size=PAGE_SIZE)
    return [dict(row) for row in session.execute(stmt)]


def main():
    host, port, ks = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    kwargs = {}
    if len(sys.argv) > 4:
        kwargs["protocol_version"] = int(sys.argv[4])
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    warnings = Warnings()
    logging.getLogger("cassandra").addHandler(warnings)

    cluster = Cluster(contact_points=(host,), port=port,
                      load_balancing_policy=WhiteListRoundRobinPolicy([host]),
                      control_connection_timeout=10, connect_timeout=10, **kwargs)
    session = cluster.connect()
    try:
        session.default_timeout = 10
        session.row_factory = ordered_dict_factory
        report = run(cluster, session, ks)
        report["warnings"] = warnings.messages
        print(json.dumps(report, indent=2, sort_keys=True))
    finally:
        cluster.shutdown()


def run(cluster, session, ks):
    # cqlsh's get_connection_versions.
    local = session.execute("select * from system.local where key = 'local'").one()
    peers = list(session.execute("select * from system.peers"))
    meta = cluster.metadata
    ksm = meta.keyspaces[ks]
    report = {
        "protocol_version": cluster.protocol_version,
        "release_version": local["release_version"],
        "cql_version": local["cql_version"],
        "peers": len(peers),
        "keyspaces": sorted(meta.keyspaces),
        "tables": sorted(ksm.tables),
        "user_types": sorted(ksm.user_types),
        "indexes": sorted(ksm.indexes),
        "columns": {name: list(t.columns) for name, t in ksm.tables.items()},
    }

    # The schema once more, as cqlsh's DESCRIBE did before 4.0 after a
    # refresh.
    cluster.refresh_schema_metadata()
    ksm = cluster.metadata.keyspaces[ks]
    report["export"] = ksm.export_as_string()
    report["table_export"] = {name: t.export_as_string() for name, t in ksm.tables.items()}

    out = {}
    for cql in [
        "DESCRIBE KEYSPACES",
        "DESCRIBE KEYSPACE %s" % ks,
        "DESCRIBE TABLE %s.readings" % ks,
        "DESCRIBE TYPE %s.address" % ks,
        "DESCRIBE INDEX %s.readings_note_idx" % ks,
        "DESCRIBE MATERIALIZED VIEW %s.kv_by_v" % ks,
        "DESCRIBE FUNCTION %s.plus" % ks,
        "DESCRIBE AGGREGATE %s.total" % ks,
        "DESC ONLY KEYSPACE %s" % ks,
    ]:
        out[cql] = describe(session, cql)
    # Bare names and listings in the keyspace, after USE.
    session.execute("USE %s" % ks)
    for cql in ["DESCRIBE TABLES", "DESCRIBE TYPES", "DESCRIBE FUNCTIONS", "DESCRIBE readings"]:
        out["USE " + cql] = describe(session, cql)
    report["describe"] = out
    # DESCRIBE CLUSTER in a keyspace adds the token ranges' replicas: a
    # map of lists, which cqlsh prints.
    cluster_row = describe(session, "DESCRIBE CLUSTER")[0]
    report["describe_cluster"] = {
        "cluster": cluster_row["cluster"],
        "partitioner": cluster_row["partitioner"],
        "snitch": cluster_row["snitch"],
        "ranges": len(cluster_row["range_ownership"]),
    }

    try:
        describe(session, "DESCRIBE TABLE %s.nope" % ks)
        report["describe_error"] = ""
    except InvalidRequest as e:
        report["describe_error"] = str(e)
    return report


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(1)
