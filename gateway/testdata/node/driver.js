'use strict';

// Drives a cqlpg gateway with the unmodified DataStax Node.js driver.
//
// Usage: node driver.js HOST PORT KEYSPACE
//
// Connects as an application would (the driver's defaults, the local
// datacenter named, reads and writes at LOCAL_QUORUM), creates KEYSPACE
// with a user type and tables, and runs what applications run: simple and
// prepared statements with hints, batches of each kind, paging by eachRow,
// by page state, by stream and by async iteration, schema and ring
// metadata, and user type values. It prints one JSON report on stdout for
// the Go test to check; on a failure it prints the error on stderr and
// exits 1.

const cassandra = require('cassandra-driver');

const [host, port, ks] = process.argv.slice(2);

// Rows of partition 'a' span several pages at every page size used here.
const partitionRows = 25;

function ms(since) {
  return Number(process.hrtime.bigint() - since) / 1e6;
}

// timed returns what f resolves to and how long it took, in milliseconds.
async function timed(f) {
  const start = process.hrtime.bigint();
  const value = await f();
  return [value, Math.round(ms(start) * 10) / 10];
}

// typeName spells a column type as CQL does, from the driver's type
// descriptor, so the test can compare it with the DDL.
function typeName(t) {
  const codes = cassandra.types.dataTypes;
  const simple = {
    [codes.ascii]: 'ascii', [codes.bigint]: 'bigint', [codes.blob]: 'blob', [codes.boolean]: 'boolean',
    [codes.counter]: 'counter', [codes.decimal]: 'decimal', [codes.double]: 'double', [codes.float]: 'float',
    [codes.int]: 'int', [codes.timestamp]: 'timestamp', [codes.uuid]: 'uuid', [codes.varchar]: 'text',
    [codes.text]: 'text', [codes.varint]: 'varint', [codes.timeuuid]: 'timeuuid', [codes.inet]: 'inet',
    [codes.date]: 'date', [codes.time]: 'time', [codes.smallint]: 'smallint', [codes.tinyint]: 'tinyint',
    [codes.duration]: 'duration',
  };
  let out;
  switch (t.code) {
    case codes.list: out = `list<${typeName(t.info)}>`; break;
    case codes.set: out = `set<${typeName(t.info)}>`; break;
    case codes.map: out = `map<${typeName(t.info[0])}, ${typeName(t.info[1])}>`; break;
    case codes.tuple: out = `tuple<${t.info.map(typeName).join(', ')}>`; break;
    case codes.udt: out = t.info.name; break;
    default: out = simple[t.code] || `code ${t.code}`;
  }
  return t.options && t.options.frozen ? `frozen<${out}>` : out;
}

function plain(v) {
  if (v === null || v === undefined) {
    return null;
  }
  if (v instanceof Date) {
    return v.toISOString();
  }
  if (Array.isArray(v)) {
    return v.map(plain);
  }
  if (v instanceof cassandra.types.Long || v instanceof cassandra.types.Uuid ||
      v instanceof cassandra.types.InetAddress) {
    return v.toString();
  }
  if (typeof v === 'object' && !Buffer.isBuffer(v)) {
    const out = {};
    for (const k of Object.keys(v).sort()) {
      out[k] = plain(v[k]);
    }
    return out;
  }
  return v;
}

// failure describes an error the gateway answered, as the application
// sees it.
async function failure(f) {
  try {
    await f();
  } catch (err) {
    return { code: err.code === undefined ? null : err.code, message: err.message };
  }
  return null;
}

async function main() {
  const logs = [];
  const client = new cassandra.Client({
    contactPoints: [host],
    localDataCenter: 'datacenter1',
    protocolOptions: { port: Number(port) },
    // The keyspace has three replicas. At the driver's default, LOCAL_ONE,
    // a read may ask a replica that a write acknowledged by another has
    // not reached yet, in cqlpg as in Cassandra; applications that read
    // their writes set a quorum.
    queryOptions: { consistency: cassandra.types.consistencies.localQuorum },
  });
  // The driver logs, rather than throws, most failures to read the
  // topology and the schema; the test fails on any of them.
  client.on('log', (level, className, message, info) => {
    if (level === 'warning' || level === 'error') {
      logs.push(`${level} ${className}: ${message}${info ? ' ' + info : ''}`);
    }
  });

  const report = { logs };
  [, report.connect_ms] = await timed(() => client.connect());
  try {
    await run(client, report);
  } finally {
    await client.shutdown();
  }
  process.stdout.write(JSON.stringify(report, null, 2) + '\n');
}

async function run(client, report) {
  report.protocol_version = client.controlConnection.protocolVersion;
  report.keyspaces_at_connect = Object.keys(client.metadata.keyspaces).sort();
  report.hosts = client.hosts.values().map(h => ({
    address: h.address,
    datacenter: h.datacenter,
    rack: h.rack,
    release_version: h.cassandraVersion,
    host_id: h.hostId ? h.hostId.toString() : null,
    tokens: (h.tokens || []).slice().sort(),
    up: h.isUp(),
  }));

  // Schema: each DDL returns once the driver has seen the schema agree.
  const ddl = {};
  const agreed = {};
  const schema = [
    ['keyspace', `CREATE KEYSPACE ${ks} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`],
    ['type', `CREATE TYPE ${ks}.address (street text, city text, zip int, phones frozen<list<text>>)`],
    ['table', `CREATE TABLE ${ks}.readings (sensor text, seq int, value double, note text,
        PRIMARY KEY (sensor, seq)) WITH CLUSTERING ORDER BY (seq DESC) AND comment = 'node driver'
        AND default_time_to_live = 86400`],
    ['users', `CREATE TABLE ${ks}.users (id int PRIMARY KEY, name text, home address,
        work frozen<address>, others map<text, frozen<address>>)`],
    ['hits', `CREATE TABLE ${ks}.hits (page text PRIMARY KEY, n counter)`],
  ];
  for (const [name, cql] of schema) {
    const [rs, took] = await timed(() => client.execute(cql));
    ddl[name] = took;
    agreed[name] = rs.info.isSchemaInAgreement;
  }
  report.ddl_ms = ddl;
  report.ddl_agreed = agreed;
  [report.check_schema_agreement, report.check_schema_agreement_ms] =
    await timed(() => client.metadata.checkSchemaAgreement());

  await writes(client, report);
  await paging(client, report);
  await batches(client, report);
  await udts(client, report);
  await metadata(client, report);
}

const insertReading = () => `INSERT INTO ${ks}.readings (sensor, seq, value, note) VALUES (?, ?, ?, ?)`;
const selectPartition = () => `SELECT sensor, seq, value, note FROM ${ks}.readings WHERE sensor = ?`;

async function writes(client, report) {
  // A simple statement carries no types: the hints give them. Without
  // them the driver sends a JavaScript number as a double, which the
  // gateway must refuse for an int column as Cassandra does.
  await client.execute(insertReading(), ['b', 1, 0.5, 'hinted'],
    { hints: ['text', 'int', 'double', 'text'] });
  report.unhinted_error = await failure(() => client.execute(insertReading(), ['b', 2, 0.5, 'unhinted']));
  report.missing_table_error = await failure(() => client.execute(`SELECT * FROM ${ks}.nope`));

  // Prepared statements carry their types, so the hints are redundant:
  // applications pass them anyway, and the driver must ignore them.
  const params = [];
  for (let seq = 0; seq < partitionRows; seq++) {
    params.push(['a', seq, seq / 4, seq % 5 === 0 ? null : `note ${seq}`]);
  }
  await cassandra.concurrent.executeConcurrent(client, insertReading(), params,
    { prepare: true, concurrencyLevel: 8 });
  await client.execute(insertReading(), ['b', 3, -1.25, 'prepared'],
    { prepare: true, hints: ['text', 'int', 'double', 'text'] });

  const rs = await client.execute(selectPartition(), ['b'], { prepare: true });
  report.partition_b = rs.rows.map(r => plain(r));
  report.partition_b_columns = rs.columns.map(c => ({ name: c.name, type: typeName(c.type) }));
  report.queried_host = rs.info.queriedHost;

  const ttl = await client.execute(`SELECT TTL(value) AS ttl FROM ${ks}.readings WHERE sensor = ? AND seq = ?`,
    ['b', 3], { prepare: true });
  report.default_ttl_read = ttl.rows[0].ttl;

  const token = await client.execute(`SELECT token(sensor) AS t FROM ${ks}.readings WHERE sensor = ? LIMIT 1`,
    ['a'], { prepare: true });
  report.server_token_a = token.rows[0].t.toString();
}

async function paging(client, report) {
  const seqs = rows => rows.map(r => r.seq);
  const out = {};

  // Page by page, each page a new request resuming from the last state,
  // as a web application pages through a listing.
  out.manual_pages = [];
  let pageState;
  for (let i = 0; i < 10; i++) {
    const rs = await client.execute(selectPartition(), ['a'], { prepare: true, fetchSize: 7, pageState });
    out.manual_pages.push(seqs(rs.rows));
    pageState = rs.pageState;
    if (!pageState) {
      break;
    }
  }
  out.manual_last_state = pageState || null;

  // The same with a simple statement.
  out.simple_pages = [];
  pageState = undefined;
  for (let i = 0; i < 10; i++) {
    const rs = await client.execute(selectPartition(), ['a'], { fetchSize: 10, pageState });
    out.simple_pages.push(seqs(rs.rows));
    pageState = rs.pageState;
    if (!pageState) {
      break;
    }
  }

  // eachRow with autoPage fetches every page itself.
  out.each_row = await new Promise((resolve, reject) => {
    const got = [];
    client.eachRow(selectPartition(), ['a'], { prepare: true, fetchSize: 6, autoPage: true },
      (n, row) => got.push(row.seq),
      err => (err ? reject(err) : resolve(got)));
  });

  // eachRow without autoPage stops after a page and resumes on nextPage().
  out.each_row_next_page = await new Promise((resolve, reject) => {
    const pages = [[]];
    client.eachRow(selectPartition(), ['a'], { prepare: true, fetchSize: 9 },
      (n, row) => pages[pages.length - 1].push(row.seq),
      (err, result) => {
        if (err) {
          return reject(err);
        }
        if (result && result.nextPage) {
          pages.push([]);
          return result.nextPage();
        }
        resolve(pages);
      });
  });

  out.stream = await new Promise((resolve, reject) => {
    const got = [];
    client.stream(selectPartition(), ['a'], { prepare: true, fetchSize: 4 })
      .on('readable', function () {
        let row;
        while ((row = this.read())) {
          got.push(row.seq);
        }
      })
      .on('end', () => resolve(got))
      .on('error', reject);
  });

  out.async_iterator = [];
  for await (const row of await client.execute(selectPartition(), ['a'], { prepare: true, fetchSize: 8 })) {
    out.async_iterator.push(row.seq);
  }

  // A full scan pages across partitions, in token order.
  out.scan = [];
  pageState = undefined;
  for (let i = 0; i < 20; i++) {
    const rs = await client.execute(`SELECT token(sensor) AS t, sensor, seq FROM ${ks}.readings`, [],
      { prepare: true, fetchSize: 5, pageState });
    out.scan.push(...rs.rows.map(r => ({ token: r.t.toString(), sensor: r.sensor, seq: r.seq })));
    pageState = rs.pageState;
    if (!pageState) {
      break;
    }
  }
  report.paging = out;
}

async function batches(client, report) {
  const ins = insertReading();
  // A logged batch across partitions and tables.
  await client.batch([
    { query: ins, params: ['c', 1, 1.5, 'logged'] },
    { query: ins, params: ['d', 1, 2.5, 'logged'] },
    { query: `INSERT INTO ${ks}.users (id, name) VALUES (?, ?)`, params: [100, 'batched'] },
  ], { prepare: true });
  // An unlogged batch on one partition, and simple statements batched
  // with their hints.
  await client.batch([
    { query: ins, params: ['e', 1, 3.5, 'unlogged'] },
    { query: ins, params: ['e', 2, 4.5, 'unlogged'] },
    { query: `UPDATE ${ks}.readings SET note = ? WHERE sensor = ? AND seq = ?`, params: ['updated', 'e', 1] },
  ], { prepare: true, logged: false });
  await client.batch([
    { query: ins, params: ['f', 1, 5.5, 'simple'] },
    { query: `DELETE FROM ${ks}.readings WHERE sensor = ? AND seq = ?`, params: ['d', 1] },
  ], { hints: [['text', 'int', 'double', 'text'], ['text', 'int']] });
  const inc = `UPDATE ${ks}.hits SET n = n + ? WHERE page = ?`;
  await client.batch([
    { query: inc, params: [cassandra.types.Long.fromNumber(3), 'home'] },
    { query: inc, params: [cassandra.types.Long.fromNumber(4), 'home'] },
    { query: inc, params: [cassandra.types.Long.fromNumber(-2), 'about'] },
  ], { prepare: true, counter: true });

  const out = {};
  for (const sensor of ['c', 'd', 'e', 'f']) {
    const rs = await client.execute(selectPartition(), [sensor], { prepare: true });
    out[sensor] = rs.rows.map(r => plain(r));
  }
  const user = await client.execute(`SELECT name FROM ${ks}.users WHERE id = ?`, [100], { prepare: true });
  out.user = user.rows.map(r => r.name);
  const hits = await client.execute(`SELECT page, n FROM ${ks}.hits`, [], { prepare: true });
  out.hits = Object.fromEntries(hits.rows.map(r => [r.page, r.n.toString()]));
  // Cassandra refuses a counter update in a logged batch.
  out.counter_in_logged_error = await failure(() => client.batch([{ query: inc, params: [1, 'home'] }],
    { prepare: true }));
  report.batches = out;
}

async function udts(client, report) {
  const home = { street: '1 Main St', city: 'Springfield', zip: 12345, phones: ['555-0100', '555-0101'] };
  // The driver sends an empty list as null, so every list here has
  // elements.
  const work = { street: '9 Office Rd', city: 'Shelbyville', zip: 54321, phones: ['555-0199'] };
  await client.execute(`INSERT INTO ${ks}.users (id, name, home, work, others) VALUES (?, ?, ?, ?, ?)`,
    [1, 'homer', home, work, { cabin: { street: 'Lake Rd', city: null, zip: 7, phones: null } }],
    { prepare: true });
  // A simple statement names the user type in its hint: the driver reads
  // the type's fields from system_schema.types to encode the value.
  await client.execute(`INSERT INTO ${ks}.users (id, name, home) VALUES (?, ?, ?)`,
    [2, 'marge', { street: '2 Main St', city: 'Springfield', zip: 12345 }],
    { hints: ['int', 'text', `udt<${ks}.address>`] });
  // Non-frozen user types take field updates.
  await client.execute(`UPDATE ${ks}.users SET home.city = ?, home.zip = ? WHERE id = ?`,
    ['Capital City', 99999, 2], { prepare: true });

  const rs = await client.execute(`SELECT id, name, home, work, others FROM ${ks}.users WHERE id IN (1, 2)`);
  const out = {};
  for (const r of rs.rows) {
    out[r.id] = plain({ name: r.name, home: r.home, work: r.work, others: r.others });
  }
  report.udt_rows = out;
  report.udt_columns = rs.columns.map(c => ({ name: c.name, type: typeName(c.type) }));
  const homeType = rs.columns.find(c => c.name === 'home').type;
  report.udt_result_fields = homeType.info.fields.map(f => ({ name: f.name, type: typeName(f.type) }));
}

async function metadata(client, report) {
  const ksm = client.metadata.keyspaces[ks];
  report.keyspace = ksm && {
    strategy: ksm.strategy,
    options: ksm.strategyOptions,
    durable_writes: ksm.durableWrites,
  };

  const table = await client.metadata.getTable(ks, 'readings');
  report.table = table && {
    partition_keys: table.partitionKeys.map(c => c.name),
    clustering_keys: table.clusteringKeys.map(c => c.name),
    clustering_order: table.clusteringOrder,
    columns: table.columns.map(c => ({ name: c.name, type: typeName(c.type) })),
    comment: table.comment,
    default_ttl: table.defaultTtl,
    gc_grace_seconds: table.gcGraceSeconds,
    virtual: table.virtual,
  };
  const users = await client.metadata.getTable(ks, 'users');
  report.users_columns = users && users.columns.map(c => ({ name: c.name, type: typeName(c.type) }));

  const udt = await client.metadata.getUdt(ks, 'address');
  report.udt = udt && { name: udt.name, fields: udt.fields.map(f => ({ name: f.name, type: typeName(f.type) })) };
  report.missing_table = await client.metadata.getTable(ks, 'nope');
  const local = await client.metadata.getTable('system', 'local');
  report.system_local_partition_keys = local && local.partitionKeys.map(c => c.name);
  // The driver looks a table that system_schema does not list up in
  // system_virtual_schema.
  const virtual = await client.metadata.getTable('system_virtual_schema', 'tables');
  report.virtual_table = virtual && {
    virtual: virtual.virtual,
    partition_keys: virtual.partitionKeys.map(c => c.name),
    clustering_keys: virtual.clusteringKeys.map(c => c.name),
    columns: virtual.columns.map(c => ({ name: c.name, type: typeName(c.type) })),
  };

  // The ring: the driver's Murmur3 token for a key, the replicas it
  // routes that key to, and the ranges each host holds.
  const hosts = client.hosts.values();
  const token = client.metadata.newToken([Buffer.from('a')]);
  const replicaAddresses = hs => (hs || []).map(h => h.address).sort();
  report.ring = {
    driver_token_a: token.getValue().toString(),
    ranges: client.metadata.getTokenRanges().size,
    replicas_a: replicaAddresses(client.metadata.getReplicas(ks, Buffer.from('a'))),
    replicas_token_a: replicaAddresses(client.metadata.getReplicas(ks, token)),
    ranges_of_host: hosts.map(h => client.metadata.getTokenRangesForHost(ks, h).size),
  };
}

main().catch(err => {
  process.stderr.write((err && err.stack) || String(err));
  process.stderr.write('\n');
  process.exit(1);
});
