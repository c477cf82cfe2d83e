import { createTestDatabase, type TestDatabase } from '@tally/billing-core/testing';
import { sql } from 'kysely';
import type { FakeStripe } from '../../support/fakes/fake-stripe';
import { checkIdempotencyKeys, KeyedRequestLog } from './keyed-requests';

/**
 * The chaos suite's Idempotency-Key invariant (checked after every scenario) holds for keys that
 * behaved, and reports each way a key can produce more than one effect or answer: two answers,
 * a replay not marked, more rows than actions, an answer naming no row, two intents for a top-up.
 */
describe('checkIdempotencyKeys (the chaos invariant: every Idempotency-Key at most one effect)', () => {
  let database: TestDatabase;
  const stripe = { paymentIntents: new Map<string, { metadata: Record<string, string> }>() };

  beforeEach(async () => {
    database = await createTestDatabase();
    stripe.paymentIntents.clear();
  });
  afterEach(async () => database?.drop());

  const answer = (status: number, body: unknown, replayed = false) =>
    Promise.resolve(
      new Response(JSON.stringify(body), {
        status,
        headers: replayed ? { 'idempotent-replayed': 'true' } : {},
      }),
    );
  const noAnswer = () => Promise.reject(new TypeError('fetch failed'));
  const topup = async (user: string, reference: string) => {
    await sql`INSERT INTO users (id) VALUES (${user}) ON CONFLICT DO NOTHING`.execute(database.db);
    await sql`INSERT INTO topups (reference, user_id, pack_id, tokens, amount_minor, currency)
              VALUES (${reference}, ${user}, 'tokens_100', 100, 499, 'usd')`.execute(database.db);
  };
  const post = (log: KeyedRequestLog, user: string, key: string | undefined, sent: Promise<Response>) =>
    log.record(`/v1/users/${user}/topups`, { packId: 'tokens_100' }, key, sent).catch(() => undefined);
  const check = async (log: KeyedRequestLog) =>
    (await checkIdempotencyKeys(database.db, log, stripe as unknown as FakeStripe)).violations.map((v) => v.detail);

  it('holds for a key retried after no answer, answered once and replayed byte for byte', async () => {
    const log = new KeyedRequestLog();
    await topup('keyed-ok', 'tu_keyedok0001');
    await post(log, 'keyed-ok', 'k1', noAnswer());
    await post(log, 'keyed-ok', 'k1', answer(201, { reference: 'tu_keyedok0001' }));
    await post(log, 'keyed-ok', 'k1', answer(201, { reference: 'tu_keyedok0001' }, true));
    stripe.paymentIntents.set('pi_1', { metadata: { topup_reference: 'tu_keyedok0001' } });
    expect(await check(log)).toEqual([]);
    expect(log.actions).toHaveLength(1);
    expect(log.actions[0]?.answers.map((a) => a.status)).toEqual([0, 201, 201]);
  });

  it('reports a key answered two ways, a replay not marked, two rows for one key and two intents', async () => {
    const log = new KeyedRequestLog();
    await topup('keyed-bad', 'tu_keyedbad001');
    await topup('keyed-bad', 'tu_keyedbad002');
    await post(log, 'keyed-bad', 'k1', answer(201, { reference: 'tu_keyedbad001' }));
    await post(log, 'keyed-bad', 'k1', answer(201, { reference: 'tu_keyedbad002' }, true));
    await post(log, 'keyed-bad', 'k1', answer(201, { reference: 'tu_keyedbad001' }));
    stripe.paymentIntents.set('pi_a', { metadata: { topup_reference: 'tu_keyedbad001' } });
    stripe.paymentIntents.set('pi_b', { metadata: { topup_reference: 'tu_keyedbad001' } });
    const details = await check(log);
    expect(details).toEqual([
      expect.stringMatching(/keyed-bad k1: answered 201 .*tu_keyedbad001.*, then 201 .*tu_keyedbad002/),
      'keyed-bad k1: a retry after the answer was not marked replayed',
      'topup keyed-bad: 2 rows from 1 actions',
      'top-up tu_keyedbad001: 2 PaymentIntents',
    ]);
  });

  it('reports an answer naming no row, and counts each unkeyed POST as an action of its own', async () => {
    const log = new KeyedRequestLog();
    await post(log, 'keyed-ghost', 'k1', answer(201, { reference: 'tu_keyedghost1' }));
    expect(await check(log)).toEqual([
      'keyed-ghost k1 answered with topup:tu_keyedghost1, which is no row of keyed-ghost',
    ]);

    const unkeyed = new KeyedRequestLog();
    await topup('unkeyed', 'tu_unkeyed0001');
    await topup('unkeyed', 'tu_unkeyed0002');
    await post(unkeyed, 'unkeyed', undefined, answer(201, { reference: 'tu_unkeyed0001' }));
    await post(unkeyed, 'unkeyed', undefined, answer(201, { reference: 'tu_unkeyed0002' }));
    expect(await check(unkeyed)).toEqual([]);
  });
});
