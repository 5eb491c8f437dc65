"""Drives a cqlpg gateway with the unmodified DataStax Python driver.

Usage: driver.py HOST PORT KEYSPACE

Connects with the driver's defaults except for the contact point and port,
so the driver negotiates the protocol version itself (starting at DSE_V2)
and loads the full schema. Then it creates KEYSPACE and a table clustered
DESC, waits for schema agreement, checks the table's metadata, writes rows
with prepared statements and reads them back. It prints one JSON report on
stdout; on any failure it prints the traceback on stderr and exits 1.
"""

import calendar
import datetime
import json
import logging
import sys
import time
import traceback
import uuid

from cassandra.cluster import Cluster

TABLE = "readings"

DDL = """
CREATE TABLE {ks}.readings (
    sensor text,
    day date,
    at timestamp,
    seq int,
    value double,
    note text,
    flag boolean,
    id uuid,
    PRIMARY KEY ((sensor, day), at, seq)
) WITH CLUSTERING ORDER BY (at DESC, seq ASC)
"""

BASE = datetime.datetime(2024, 3, 1, 12, 0, 0)
DAY = datetime.date(2024, 3, 1)

# Rows as (sensor, minute offset of at, seq, value, note, flag), written in
# this order, which is not the clustering order (at DESC, seq ASC).
ROWS = [
    ("a", 1, 2, 1.5, "second", True),
    ("a", 3, 1, -2.25, "latest", False),
    ("b", 2, 1, 9.0, "other partition", None),
    ("a", 0, 1, 0.0, None, None),
    ("a", 1, 1, 3.125, "first", True),
    ("a", 2, 7, 100.5, "middle", False),
]


class Warnings(logging.Handler):
    """Records the driver's warnings and errors: it logs, rather than
    raises, most failures to read the schema and the topology."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append("%s %s: %s" % (record.levelname, record.name, record.getMessage()))


def millis(dt):
    """Milliseconds since the epoch of a naive UTC datetime."""
    return calendar.timegm(dt.utctimetuple()) * 1000 + dt.microsecond // 1000


def row_json(sensor, at, seq, value, note, flag, id_):
    return {
        "sensor": sensor,
        "at": millis(at),
        "seq": seq,
        "value": value,
        "note": note,
        "flag": flag,
        "id": str(id_),
    }


def column_summary(col):
    return {"name": col.name, "type": col.cql_type, "reversed": bool(col.is_reversed)}


def main():
    host, port, ks = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    warnings = Warnings()
    logging.getLogger("cassandra").addHandler(warnings)

    start = time.monotonic()
    cluster = Cluster(contact_points=[host], port=port)
    session = cluster.connect()
    connect_ms = (time.monotonic() - start) * 1000

    try:
        return run(cluster, session, ks, connect_ms, warnings)
    finally:
        cluster.shutdown()


def run(cluster, session, ks, connect_ms, warnings):
    report = {
        "protocol_version": cluster.protocol_version,
        "connect_ms": round(connect_ms, 1),
        # The same list object: it gains what the driver logs until the
        # report is printed.
        "warnings": warnings.messages,
        "cluster_name": cluster.metadata.cluster_name,
        "partitioner": cluster.metadata.partitioner,
        "hosts": [str(h.endpoint) for h in cluster.metadata.all_hosts()],
        "keyspaces_at_connect": sorted(cluster.metadata.keyspaces),
    }

    agreed = []
    rs = session.execute(
        "CREATE KEYSPACE %s WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 1}" % ks)
    agreed.append(rs.response_future.is_schema_agreed)
    rs = session.execute(DDL.format(ks=ks))
    agreed.append(rs.response_future.is_schema_agreed)
    agreed.append(cluster.control_connection.wait_for_schema_agreement())
    report["schema_agreed"] = agreed

    ksm = cluster.metadata.keyspaces.get(ks)
    if ksm is None:
        raise AssertionError("keyspace %s missing from metadata: %s"
                             % (ks, sorted(cluster.metadata.keyspaces)))
    table = ksm.tables.get(TABLE)
    if table is None:
        raise AssertionError("table %s.%s missing from metadata: %s"
                             % (ks, TABLE, sorted(ksm.tables)))
    report["keyspace"] = {
        "durable_writes": ksm.durable_writes,
        "strategy": type(ksm.replication_strategy).__name__,
        "replication_factor": getattr(ksm.replication_strategy, "replication_factor", None),
    }
    report["table"] = {
        "partition_key": [column_summary(c) for c in table.partition_key],
        "clustering_key": [column_summary(c) for c in table.clustering_key],
        "columns": [column_summary(c) for c in table.columns.values()],
        "create_statement": table.export_as_string(),
    }

    insert = session.prepare(
        "INSERT INTO %s.readings (sensor, day, at, seq, value, note, flag, id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)" % ks)
    written = []
    for i, (sensor, minutes, seq, value, note, flag) in enumerate(ROWS):
        at = BASE + datetime.timedelta(minutes=minutes)
        id_ = uuid.UUID(int=i + 1)
        session.execute(insert, (sensor, DAY, at, seq, value, note, flag, id_))
        written.append(row_json(sensor, at, seq, value, note, flag, id_))
    report["written"] = written

    select = session.prepare(
        "SELECT sensor, day, at, seq, value, note, flag, id FROM %s.readings "
        "WHERE sensor = ? AND day = ?" % ks)
    read = []
    for r in session.execute(select, ("a", DAY)):
        if str(r.day) != DAY.isoformat():
            raise AssertionError("day read back as %r" % (r.day,))
        read.append(row_json(r.sensor, r.at, r.seq, r.value, r.note, r.flag, r.id))
    report["read"] = read

    # A clustering slice, bound by a prepared marker: rows at or after
    # minute 1, newest first.
    since = session.prepare(
        "SELECT seq FROM %s.readings WHERE sensor = ? AND day = ? AND at >= ?" % ks)
    report["read_since_minute_1"] = [
        r.seq for r in session.execute(since, ("a", DAY, BASE + datetime.timedelta(minutes=1)))]

    print(json.dumps(report, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:
        traceback.print_exc()
        sys.exit(1)
