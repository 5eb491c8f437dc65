"""Logs in to a cqlpg gateway with authentication on, with the unmodified
DataStax Python driver and its PlainTextAuthProvider.

Usage: driver_auth.py HOST PORT USER PASSWORD TABLE

Connects as USER, reads system.local, LIST ROLES and TABLE (which USER may
not read), then tries to connect with a wrong password. Prints one JSON
report on stdout; on any unexpected failure it prints the traceback on
stderr and exits 1.
"""

import json
import sys
import time
import traceback

from cassandra import Unauthorized
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster, NoHostAvailable
from cassandra.policies import HostFilterPolicy, RoundRobinPolicy


def cluster(host, port, user, password):
    # Only this gateway: the others on the same shards are its peers, and
    # may run without authentication.
    policy = HostFilterPolicy(RoundRobinPolicy(), lambda h: h.endpoint.port == port)
    return Cluster([host], port=port, auth_provider=PlainTextAuthProvider(user, password),
                   load_balancing_policy=policy)


def main():
    host, port, user, password, table = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    report = {}
    c = cluster(host, port, user, password)
    start = time.monotonic()
    session = c.connect()
    report["connect_ms"] = (time.monotonic() - start) * 1000
    report["protocol_version"] = c.protocol_version
    report["release_version"] = session.execute("SELECT release_version FROM system.local").one()[0]
    report["roles"] = [r.role for r in session.execute("LIST ROLES")]
    try:
        session.execute("SELECT * FROM %s" % table)
        report["unauthorized"] = None
    except Unauthorized as e:
        report["unauthorized"] = str(e)
    c.shutdown()

    bad = cluster(host, port, user, password + "-wrong")
    try:
        bad.connect()
        report["wrong_password"] = None
    except NoHostAvailable as e:
        report["wrong_password"] = " ".join("%s: %s" % (type(v).__name__, v) for v in e.errors.values())
    finally:
        bad.shutdown()
    print(json.dumps(report))


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(1)
