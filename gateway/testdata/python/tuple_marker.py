"""Binds whole tuples to the markers of multi-column relations in writes,
(c1, c2) = ? and (c1, c2) IN ?, with the DataStax Python driver, which
serializes a tuple for a marker whose type is a tuple.

Usage: tuple_marker.py HOST PORT KEYSPACE

KEYSPACE holds table t (k int, c1 int, c2 int, v int, PRIMARY KEY (k, c1,
c2)). The script updates and deletes rows through prepared statements and
prints one JSON report on stdout: the errors of the writes that must fail,
by name. On any other failure it prints the traceback on stderr and exits 1.
"""

import json
import sys
import traceback

from cassandra import InvalidRequest
from cassandra.cluster import Cluster
from cassandra.policies import WhiteListRoundRobinPolicy


def main():
    host, port, ks = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    cluster = Cluster([host], port=port, load_balancing_policy=WhiteListRoundRobinPolicy([host]))
    session = cluster.connect(ks)
    update = session.prepare("UPDATE t SET v = ? WHERE k = ? AND (c1, c2) = ?")
    delete = session.prepare("DELETE FROM t WHERE k = ? AND (c1, c2) IN ?")
    for c1, c2 in [(1, 1), (1, 2), (2, 1), (2, 2)]:
        session.execute(update, (10 * c1 + c2, 0, (c1, c2)))
    session.execute(delete, (0, [(1, 2), (2, 1)]))
    errors = {}
    for name, stmt, args in [
        ("eq_null_element", update, (1, 0, (1, None))),
        ("in_null_element", delete, (0, [(1, 1), (None, 2)])),
    ]:
        try:
            session.execute(stmt, args)
            errors[name] = None
        except InvalidRequest as e:
            errors[name] = str(e)
    print(json.dumps({"errors": errors}))
    cluster.shutdown()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(1)
