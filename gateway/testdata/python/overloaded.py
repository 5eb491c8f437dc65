"""Connects to a cqlpg gateway with the DataStax Python driver and runs a
query, reporting how the driver fares when the gateway is full.

Usage: overloaded.py HOST PORT

It prints one JSON report on stdout: {"connected": true, "version": ...}
when the session connected and queried system.local, or
{"connected": false, "error": ...} with the driver's error when it could
not connect; on any other failure it prints the traceback on stderr and
exits 1.
"""

import json
import sys
import traceback

from cassandra.cluster import Cluster, NoHostAvailable
from cassandra.policies import WhiteListRoundRobinPolicy


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    cluster = Cluster([host], port=port, load_balancing_policy=WhiteListRoundRobinPolicy([host]),
                      connect_timeout=5, control_connection_timeout=5)
    try:
        session = cluster.connect()
    except NoHostAvailable as e:
        print(json.dumps({"connected": False, "error": str(e)}))
        return
    try:
        row = session.execute("SELECT release_version FROM system.local").one()
        print(json.dumps({"connected": True, "version": row.release_version}))
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(1)
