"""Drives a cqlpg gateway with the unmodified DataStax Python driver.

Usage: driver.py HOST PORT KEYSPACE

Connects with the driver's defaults except for the contact point and port,
so the driver negotiates the protocol version itself (starting at DSE_V2)
and loads the full schema. Then it creates KEYSPACE, a user type and
tables, waits for schema agreement, checks the metadata, writes rows with
prepared statements and reads them back, pages by fetch_size and resumes
from a paging_state, runs batches of each kind, maps the user type to a
class registered with register_user_type, and connects a second time to
read the whole schema, the new keyspace included, at connect. It prints
one JSON report on stdout; on any failure it prints the traceback on
stderr and exits 1.
"""

import calendar
import datetime
import json
import logging
import sys
import time
import traceback
import uuid

from cassandra import InvalidRequest
from cassandra.cluster import Cluster
from cassandra.query import BatchStatement, BatchType, SimpleStatement

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

# Created after the readings table, which the test times.
EXTRA_DDL = [
    ("type", "CREATE TYPE {ks}.address (street text, city text, zip int, phones frozen<list<text>>)"),
    ("users", "CREATE TABLE {ks}.users (id int PRIMARY KEY, name text, home frozen<address>, "
              "work address, others map<text, frozen<address>>)"),
    ("paged", "CREATE TABLE {ks}.paged (k text, seq int, v text, PRIMARY KEY (k, seq))"),
    ("hits", "CREATE TABLE {ks}.hits (page text PRIMARY KEY, n counter)"),
]

# Rows of the partition that is paged, more than any page size used.
PAGED_ROWS = 25

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
        # Read from system_virtual_schema at connect.
        "virtual_keyspaces": {name: sorted(k.tables) for name, k in cluster.metadata.keyspaces.items()
                              if k.virtual},
    }

    # Each DDL statement returns once the driver has seen every host
    # report one schema version and has refreshed its metadata.
    agreed = []
    ddl_ms = {}
    for name, cql in [
            ("keyspace", "CREATE KEYSPACE %s WITH replication = "
                         "{'class': 'SimpleStrategy', 'replication_factor': 1}" % ks),
            ("table", DDL.format(ks=ks))]:
        rs, ddl_ms[name] = timed(lambda: session.execute(cql))
        agreed.append(rs.response_future.is_schema_agreed)
    ok, report["wait_for_schema_agreement_ms"] = timed(
        cluster.control_connection.wait_for_schema_agreement)
    agreed.append(ok)
    report["schema_agreed"] = agreed
    for name, cql in EXTRA_DDL:
        rs, ddl_ms[name] = timed(lambda: session.execute(cql.format(ks=ks)))
        if not rs.response_future.is_schema_agreed:
            raise AssertionError("no schema agreement after %s" % name)
    report["ddl_ms"] = ddl_ms

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

    report["named_bind"] = [
        r.seq for r in session.execute(select, {"sensor": "a", "day": DAY})]

    report["paging"] = paging(session, ks)
    report["batches"] = batches(session, ks)
    report["udt"] = udts(cluster, session, ks)
    report["token_map"] = token_map(cluster, session, ks)
    report["reconnect"] = reconnect(cluster.contact_points[0], cluster.port, ks, warnings)

    print(json.dumps(report, indent=2, sort_keys=True))
    return 0


def timed(f):
    """Returns what f returns and how long it took, in milliseconds."""
    start = time.monotonic()
    value = f()
    return value, round((time.monotonic() - start) * 1000, 1)


def paging(session, ks):
    """Pages a partition of PAGED_ROWS rows in each way the driver offers."""
    insert = session.prepare(
        "INSERT INTO %s.paged (k, seq, v) VALUES (?, ?, ?)" % ks)
    for seq in range(PAGED_ROWS):
        session.execute(insert, ("p", seq, "v%d" % seq))
    out = {}

    # Iterating a result fetches the pages as it goes.
    stmt = SimpleStatement("SELECT seq FROM %s.paged WHERE k = 'p'" % ks, fetch_size=6)
    out["iterated"] = [r.seq for r in session.execute(stmt)]

    # A page at a time, each request resuming from the paging state the
    # last one returned, as a web application pages through a listing.
    select = session.prepare("SELECT seq, v FROM %s.paged WHERE k = ?" % ks)
    bound = select.bind(("p",))
    bound.fetch_size = 7
    pages, state = [], None
    for _ in range(10):
        rs = session.execute(bound, paging_state=state)
        pages.append([r.seq for r in rs.current_rows])
        state = rs.paging_state
        if state is None:
            break
    out["resumed_pages"] = pages

    # fetch_next_page on one result.
    rs = session.execute(SimpleStatement(
        "SELECT seq FROM %s.paged WHERE k = 'p'" % ks, fetch_size=10))
    pages = [[r.seq for r in rs.current_rows]]
    while rs.has_more_pages:
        rs.fetch_next_page()
        pages.append([r.seq for r in rs.current_rows])
    out["fetched_pages"] = pages
    return out


def batches(session, ks):
    """Runs logged, unlogged and counter batches and reads what they
    wrote; a counter in a logged batch is refused."""
    insert = session.prepare("INSERT INTO %s.paged (k, seq, v) VALUES (?, ?, ?)" % ks)
    logged = BatchStatement(batch_type=BatchType.LOGGED)
    for k in ("b1", "b2", "b3"):
        logged.add(insert, (k, 1, "logged"))
    logged.add(SimpleStatement("DELETE FROM %s.paged WHERE k = %%s AND seq = %%s" % ks), ("b3", 1))
    session.execute(logged)
    unlogged = BatchStatement(batch_type=BatchType.UNLOGGED)
    unlogged.add(insert, ("b4", 1, "unlogged"))
    unlogged.add(insert, ("b4", 2, "unlogged"))
    session.execute(unlogged)
    incr = session.prepare("UPDATE %s.hits SET n = n + ? WHERE page = ?" % ks)
    counter = BatchStatement(batch_type=BatchType.COUNTER)
    counter.add(incr, (3, "home"))
    counter.add(incr, (4, "home"))
    counter.add(incr, (-2, "about"))
    session.execute(counter)

    out = {"rows": {}, "hits": {}}
    for k in ("b1", "b2", "b3", "b4"):
        out["rows"][k] = ["%d:%s" % (r.seq, r.v) for r in session.execute(
            "SELECT seq, v FROM %s.paged WHERE k = %%s" % ks, (k,))]
    for r in session.execute("SELECT page, n FROM %s.hits" % ks):
        out["hits"][r.page] = r.n
    bad = BatchStatement(batch_type=BatchType.LOGGED)
    bad.add(incr, (1, "home"))
    try:
        session.execute(bad)
        out["counter_in_logged_error"] = None
    except InvalidRequest as e:
        out["counter_in_logged_error"] = str(e)
    return out


class Address(object):
    """The application's class for the user type address."""

    def __init__(self, street=None, city=None, zip=None, phones=None):
        self.street, self.city, self.zip, self.phones = street, city, zip, phones


def address_json(a):
    if a is None:
        return None
    return {"class": type(a).__name__, "street": a.street, "city": a.city, "zip": a.zip,
            "phones": list(a.phones) if a.phones is not None else None}


def udts(cluster, session, ks):
    """Maps the user type address to a class and writes and reads it,
    bare, in a map and in a non-frozen column updated by field."""
    cluster.register_user_type(ks, "address", Address)
    insert = session.prepare(
        "INSERT INTO %s.users (id, name, home, work, others) VALUES (?, ?, ?, ?, ?)" % ks)
    session.execute(insert, (1, "homer",
                             Address("1 Main St", "Springfield", 12345, ["555-0100", "555-0101"]),
                             Address("9 Office Rd", "Shelbyville", 54321, None),
                             {"cabin": Address("Lake Rd", None, 7, None)}))
    session.execute(
        "UPDATE %s.users SET work.city = %%s WHERE id = %%s" % ks, ("Capital City", 1))
    row = session.execute("SELECT name, home, work, others FROM %s.users WHERE id = 1" % ks).one()
    ksm = cluster.metadata.keyspaces[ks]
    udt = ksm.user_types.get("address")
    users = ksm.tables["users"]
    return {
        "name": row.name,
        "home": address_json(row.home),
        "work": address_json(row.work),
        "others": {k: address_json(v) for k, v in (row.others or {}).items()},
        "field_names": list(udt.field_names) if udt else None,
        "field_types": list(udt.field_types) if udt else None,
        "columns": {c.name: c.cql_type for c in users.columns.values()},
        "keyspace_cql": ksm.export_as_string(),
    }


def token_map(cluster, session, ks):
    """The driver's ring: its token for the paged partition's key against
    the gateway's, and the replicas it routes that key to."""
    md = cluster.metadata
    key = "p".encode()
    server = session.execute("SELECT token(k) AS t FROM %s.paged WHERE k = 'p' LIMIT 1" % ks).one()
    return {
        "tokens": len(md.token_map.ring),
        "token_of_p": md.token_map.token_class.from_key(key).value,
        "server_token_of_p": server.t,
        "replicas_of_p": [str(h.endpoint) for h in md.get_replicas(ks, key)],
    }


def reconnect(host, port, ks, warnings):
    """Connects anew: the full schema load at connect now reads the
    keyspace, its tables and its user type, not just the system ones.
    What the driver logs meanwhile is reported apart, since this
    connection negotiates the protocol version again."""
    before = len(warnings.messages)
    start = time.monotonic()
    cluster = Cluster(contact_points=[host], port=port)
    cluster.connect()
    out = {"connect_ms": round((time.monotonic() - start) * 1000, 1)}
    try:
        ksm = cluster.metadata.keyspaces.get(ks)
        if ksm is None:
            raise AssertionError("keyspace %s missing from the schema loaded at connect" % ks)
        out["tables"] = sorted(ksm.tables)
        out["user_types"] = sorted(ksm.user_types)
        out["columns"] = [c.name for c in ksm.tables["readings"].columns.values()]
    finally:
        cluster.shutdown()
    out["warnings"] = warnings.messages[before:]
    del warnings.messages[before:]
    return out


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:
        traceback.print_exc()
        sys.exit(1)
