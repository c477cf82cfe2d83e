// `pnpm bench`: load-tests a running stack (start it with `pnpm start` first). Sends unique,
// authorized RevenueCat token-pack purchases to ingest with autocannon, prints ingest throughput
// and latency, then waits until the workers have credited every accepted event and prints the
// end-to-end processing rate. Bounded: BENCH_DURATION_SECONDS (default 10), loopback only.
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';

const ingest = `http://127.0.0.1:${process.env.INGEST_PORT ?? 3000}`;
const api = `http://127.0.0.1:${process.env.API_PORT ?? 3001}`;
const auth = (process.env.REVENUECAT_WEBHOOK_AUTH ?? '').split(',')[0];
const appKey = (process.env.APP_API_KEYS ?? '').split(',')[0];
const duration = Number(process.env.BENCH_DURATION_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const userId = `bench-${randomUUID().slice(0, 8)}`;

function purchase() {
  const now = Date.now();
  return JSON.stringify({
    api_version: '1.0',
    event: {
      id: randomUUID(),
      type: 'NON_RENEWING_PURCHASE',
      app_user_id: userId,
      product_id: 'tokens.100',
      purchased_at_ms: now,
      event_timestamp_ms: now,
      environment: 'SANDBOX',
      store: 'APP_STORE',
    },
  });
}

async function balance() {
  const response = await fetch(`${api}/v1/users/${userId}/wallet`, { headers: { authorization: `Bearer ${appKey}` } });
  if (!response.ok) throw new Error(`wallet read failed: ${response.status}`);
  return (await response.json()).balance;
}

const started = Date.now();
const result = await autocannon({
  url: `${ingest}/webhooks/revenuecat`,
  method: 'POST',
  connections,
  duration,
  headers: { 'content-type': 'application/json', authorization: auth },
  requests: [{ setupRequest: (request) => ({ ...request, body: purchase() }) }],
});
const accepted = result['2xx'];
console.log(`ingest: ${accepted} accepted in ${duration}s with ${connections} connections`);
console.log(
  `  ${result.requests.average.toFixed(0)} req/s average; latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms; non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts}`,
);

// autocannon counts only answers it read before the cutoff; requests in flight then may still be
// accepted, so the wallet can end above accepted × 100 (each request carries its own event id).
const expected = accepted * 100;
const deadline = Date.now() + 120_000;
let credited = await balance();
let previous = -1;
while ((credited < expected || credited !== previous) && Date.now() < deadline) {
  previous = credited;
  await new Promise((resolve) => setTimeout(resolve, 500));
  credited = await balance();
}
const seconds = (Date.now() - started) / 1000;
const events = credited / 100;
console.log(
  `processing: ${events} events credited (${accepted} answers counted before the cutoff); ` +
    `${(events / seconds).toFixed(0)} events/s end to end over ${seconds.toFixed(1)}s`,
);
if (credited < expected) {
  console.log('INCOMPLETE: fewer credits than accepted events within two minutes');
  process.exitCode = 1;
}
