'use strict';

// Drives two cqlpg gateways with the unmodified DataStax Node.js driver,
// which finds the second in the legacy system.peers.
//
// Usage: node gateways.js HOST PORT KEYSPACE
//
// Connects to the gateway at HOST:PORT, creates KEYSPACE with one replica
// and a table (the driver waits for both gateways to agree on the schema
// after each), then writes one key after another with a prepared statement
// and reports the replica the driver's token map gives each key and the
// gateway that served it. It prints one JSON report on stdout; on a
// failure it prints the error on stderr and exits 1.

const cassandra = require('cassandra-driver');

const [host, port, ks] = process.argv.slice(2);
const keys = 24;

function since(start) {
  return Math.round(Number(process.hrtime.bigint() - start) / 1e5) / 10;
}

async function main() {
  const logs = [];
  const client = new cassandra.Client({
    contactPoints: [host],
    localDataCenter: 'datacenter1',
    protocolOptions: { port: Number(port) },
  });
  client.on('log', (level, className, message, info) => {
    if (level === 'warning' || level === 'error') {
      logs.push(`${level} ${className}: ${message}${info ? ' ' + info : ''}`);
    }
  });
  const report = { logs };
  let start = process.hrtime.bigint();
  await client.connect();
  report.connect_ms = since(start);
  try {
    report.hosts = client.hosts.values().map(h => ({
      address: h.address,
      host_id: h.hostId ? h.hostId.toString() : null,
      tokens: (h.tokens || []).slice().sort(),
      up: h.isUp(),
    }));
    report.ddl_ms = {};
    report.ddl_agreed = {};
    for (const [name, cql] of [
      ['keyspace', `CREATE KEYSPACE ${ks} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`],
      ['table', `CREATE TABLE ${ks}.kv (k text PRIMARY KEY, v int)`],
    ]) {
      start = process.hrtime.bigint();
      const rs = await client.execute(cql);
      report.ddl_ms[name] = since(start);
      report.ddl_agreed[name] = rs.info.isSchemaInAgreement;
    }
    // Other tests change the shared shards' schema meanwhile, and a
    // gateway sees another's change a heartbeat later: agreement must
    // come within two seconds, as an application waiting for it would.
    report.check_schema_agreement = false;
    for (let i = 0; i < 20 && !report.check_schema_agreement; i++) {
      if (i > 0) await new Promise(r => setTimeout(r, 100));
      report.check_schema_agreement = await client.metadata.checkSchemaAgreement();
    }

    report.routes = [];
    for (let i = 0; i < keys; i++) {
      const k = `key${i}`;
      const rs = await client.execute(`INSERT INTO ${ks}.kv (k, v) VALUES (?, ?)`, [k, i], { prepare: true });
      const token = await client.execute(`SELECT token(k) AS t, v FROM ${ks}.kv WHERE k = ?`, [k], { prepare: true });
      report.routes.push({
        key: k,
        token: token.rows[0].t.toString(),
        v: token.rows[0].v,
        replicas: (client.metadata.getReplicas(ks, Buffer.from(k)) || []).map(h => h.address),
        queried: rs.info.queriedHost,
      });
    }
  } finally {
    await client.shutdown();
  }
  process.stdout.write(JSON.stringify(report, null, 2) + '\n');
}

main().catch(err => {
  process.stderr.write((err && err.stack) || String(err));
  process.stderr.write('\n');
  process.exit(1);
});
