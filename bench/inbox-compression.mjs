// `node bench/inbox-compression.mjs [rows] [rounds]`: what storing and reading the inbox's raw
// bodies costs Postgres per row with pglz and with lz4 (migration 0032), for bodies shaped as
// Stripe sends them (pretty-printed JSON, a payment_intent.succeeded with its fields, no random
// padding: the bench's own events pad with random text, which neither method compresses).
// Ingest's batch insert (16 rows a statement) and the worker's batch read, on a fresh database of
// the server of DATABASE_URL (default the local one), into a table of inbox_events' own shape;
// the backend's user + system CPU read from /proc (the server must be on this machine). Prints
// per size and method the backend CPU per row for the insert and the read, and the stored size.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { stripeTokenPackEvent } from './lib/stripe-events.mjs';
import { root } from './lib/workspace.mjs';

const require = createRequire(path.resolve(root, 'packages/billing-core/package.json'));
const pg = require('pg');
const rows = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 2);
const serverUrl = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const name = `tally_inbox_compression_${process.pid}`;

/**
 * A Stripe payment_intent.succeeded as Stripe sends it (pretty-printed), of about `size` bytes:
 * the bench's event without its random padding, the charge expanded as far as the size needs.
 */
function stripeBody(i, size) {
  const event = JSON.parse(
    stripeTokenPackEvent({ eventId: `evt_c${i}`, paymentIntentId: `pi_c${i}`, userId: `user-${i % 5000}` }),
  );
  delete event.data.object.metadata.bench_padding;
  const charge = { id: `ch_c${i}`, object: 'charge', amount: 499, amount_captured: 499, currency: 'usd' };
  const details = [
    ['billing_details', { address: { city: null, country: 'US', line1: null, postal_code: '94103' }, email: null }],
    ['outcome', { network_status: 'approved_by_network', reason: null, risk_level: 'normal', type: 'authorized' }],
    ['payment_method_details', { card: { brand: 'visa', country: 'US', exp_month: 12, funding: 'credit' } }],
    ['fraud_details', {}],
    ['refunds', { object: 'list', data: [], has_more: false, total_count: 0, url: `/v1/charges/ch_c${i}/refunds` }],
  ];
  let text = JSON.stringify(event, null, 2);
  for (let n = 0; text.length < size; n += 1) {
    const [key, value] = details[n % details.length];
    charge[n < details.length ? key : `${key}_${n}`] = value;
    event.data.object.latest_charge = charge;
    text = JSON.stringify(event, null, 2);
  }
  return text;
}

/** The backend's CPU so far, in µs (its /proc stat, clock ticks of 10 ms). */
function backendCpuUs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

const admin = new pg.Client({ connectionString: serverUrl.href });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(serverUrl.href);
url.pathname = `/${name}`;
const client = new pg.Client({ connectionString: url.href });
try {
  await client.connect();
  const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  const version = (await client.query('SHOW server_version')).rows[0].server_version;
  console.log(`Postgres ${version}, ${rows} rows a run, ${rounds} rounds, insert 16 rows a statement, read 16 by id`);
  for (const size of [2200, 4000, 7500]) {
    const bodies = Array.from({ length: rows }, (_, i) => stripeBody(i, size));
    const results = { pglz: [], lz4: [] };
    for (let round = 0; round < rounds; round += 1) {
      for (const method of round % 2 === 0 ? ['pglz', 'lz4'] : ['lz4', 'pglz']) {
        await client.query('DROP TABLE IF EXISTS inbox_copy');
        await client.query(
          `CREATE TABLE inbox_copy (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, raw_body text)`,
        );
        await client.query(`ALTER TABLE inbox_copy ALTER COLUMN raw_body SET COMPRESSION ${method}`);
        const a = backendCpuUs(pid);
        for (let i = 0; i < rows; i += 16) {
          await client.query('INSERT INTO inbox_copy (raw_body) SELECT unnest($1::text[])', [bodies.slice(i, i + 16)]);
        }
        const b = backendCpuUs(pid);
        for (let i = 0; i < rows; i += 16) {
          const ids = Array.from({ length: Math.min(16, rows - i) }, (_, k) => i + k + 1);
          await client.query('SELECT raw_body FROM inbox_copy WHERE id = ANY($1)', [ids]);
        }
        const c = backendCpuUs(pid);
        const stored = (await client.query('SELECT avg(pg_column_size(raw_body))::int AS bytes FROM inbox_copy'))
          .rows[0];
        results[method].push({ insertUs: (b - a) / rows, readUs: (c - b) / rows, storedBytes: stored.bytes });
      }
    }
    for (const [method, runs] of Object.entries(results)) {
      const list = (key) => runs.map((run) => run[key].toFixed(0)).join(', ');
      console.log(
        `${String(bodies[0].length).padStart(5)} B body  ${method.padEnd(4)}  insert µs/row ${list('insertUs')}  read µs/row ${list('readUs')}  stored ${runs[0].storedBytes} B`,
      );
    }
  }
} finally {
  await client.end().catch(() => undefined);
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.end();
}
