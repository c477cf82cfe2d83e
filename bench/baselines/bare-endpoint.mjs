// Baseline: the least an Express endpoint can do with a signed Stripe event. Checks the
// signature (HMAC-SHA256, as any endpoint receiving signed events must), parses the body once,
// runs ONE INSERT into the same inbox_events table Tally writes and, with MODE=insert-add, ONE
// BullMQ add with the same job options; answers 200 after the insert (and the add) completed.
// No logging, no metrics, no batching. MODE=floor is the floor of any Express ingest that verifies
// the signature: raw body, HMAC, JSON.parse, answer; no database, no queue.
//
// EXPRESS_CONSTRUCTORS=1 (experiments only, not the baselines' definition): the server builds its
// requests and responses with Express's prototypes, as Tally's startHttpServer does
// (expressMessageConstructors), so Express's per-request prototype swap is a no-op.
//
// Env: PORT, DATABASE_URL, MODE (insert | insert-add | floor), REDIS_URL, QUEUE_PREFIX, STRIPE_SECRET, POOL_SIZE,
// EXPRESS_CONSTRUCTORS.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import path from 'node:path';
import { bullmq, express, pg, Redis, root } from '../lib/workspace.mjs';

const mode = process.env.MODE ?? 'insert';
const secret = process.env.STRIPE_SECRET;
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE ?? 10) });
pool.on('error', () => undefined);
let queue;
let redis;
if (mode === 'insert-add') {
  redis = new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  redis.on('error', () => undefined);
  queue = new bullmq.Queue('inbox', {
    connection: redis,
    prefix: process.env.QUEUE_PREFIX,
    defaultJobOptions: {
      attempts: 25,
      backoff: { type: 'exponential', delay: 5000 },
      removeOnComplete: { age: 7 * 86400, count: 50000 },
      removeOnFail: { age: 30 * 86400 },
    },
  });
}

const insertSql = `INSERT INTO inbox_events (provider, provider_event_id, type, livemode, environment, user_id,
  provider_customer_id, provider_payment_intent_id, raw_body, enqueued_at)
  VALUES ('stripe', $1, $2, $3, $4, $5, $6, $7, $8, now())
  ON CONFLICT (provider, provider_event_id) DO NOTHING RETURNING id`;

function verified(raw, header) {
  if (!header) return false;
  let timestamp;
  const signatures = [];
  for (const part of header.split(',')) {
    const [key, value] = part.split('=');
    if (key === 't') timestamp = value;
    else if (key === 'v1') signatures.push(value);
  }
  if (!timestamp || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(raw).digest();
  return signatures.some((signature) => {
    const given = Buffer.from(signature, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

const app = express();
app.disable('x-powered-by');
app.get('/healthz', (_req, res) => res.json({ ok: true }));
app.post('/webhooks/stripe', express.raw({ type: 'application/json', limit: 1024 * 1024 }), async (req, res) => {
  if (!verified(req.body, req.get('stripe-signature'))) return res.status(400).json({ error: 'invalid_signature' });
  const text = req.body.toString('utf8');
  const event = JSON.parse(text);
  const object = event.data?.object ?? {};
  if (mode === 'floor') return res.json({ status: 'accepted', eventId: event.id });
  try {
    const { rows } = await pool.query(insertSql, [
      event.id,
      event.type,
      event.livemode,
      event.livemode ? 'production' : 'sandbox',
      object.metadata?.user_id ?? null,
      object.customer ?? null,
      object.id ?? null,
      text,
    ]);
    if (rows.length === 0) return res.json({ status: 'duplicate', eventId: event.id });
    if (queue) await queue.add('process', { inboxEventId: Number(rows[0].id) }, { jobId: `inbox-${rows[0].id}` });
    res.json({ status: 'accepted', eventId: event.id });
  } catch (error) {
    res.status(503).json({ error: String(error.message) });
  }
});

const constructors =
  process.env.EXPRESS_CONSTRUCTORS === '1'
    ? (
        await import(path.join(root, 'packages/platform/dist/http/start-http-server.js'))
      ).default.expressMessageConstructors(app)
    : {};
const server = createServer(constructors, app).listen(Number(process.env.PORT), '127.0.0.1');
server.keepAliveTimeout = 5000;
const stop = async () => {
  server.close();
  await queue?.close().catch(() => undefined);
  redis?.disconnect();
  await pool.end().catch(() => undefined);
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
