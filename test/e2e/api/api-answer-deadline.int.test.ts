import { sql } from 'kysely';
import { eventually, TestStack } from '../../support/stack';

/**
 * API_ANSWER_DEADLINE_MS (docs/configuration.md "Timeouts"): a /v1 call the database does not
 * answer is answered 503 at the deadline, not when the database gives up; the call still applies
 * when the database answers, and the app's retry with its reference finds it, never doubles it.
 */
describe('the api answer deadline', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ apiAnswerDeadlineMs: 400 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** Holds `lock` in a transaction of its own until the returned release is called. */
  async function holding(lock: string): Promise<{ release: () => Promise<void> }> {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked: () => void = () => undefined;
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const done = stack.db.transaction().execute(async (trx) => {
      await sql.raw(lock).execute(trx);
      locked();
      await released;
    });
    await isLocked;
    return {
      release: async () => {
        release();
        await done;
      },
    };
  }

  it('answers a debit stuck behind a lock 503 while the lock is held; it applies once after, and its retry answers it', async () => {
    const userId = `deadline-${Date.now().toString(36)}`;
    const granted = await stack.apiRequest(`/v1/users/${userId}/grants`, {
      method: 'POST',
      body: { amount: 100, reference: `fund-${userId}` },
    });
    expect(granted.status).toBe(201);

    const lock = await holding(`SELECT 1 FROM wallets WHERE user_id = '${userId}' FOR UPDATE`);
    const stuck = await stack.apiRequest(`/v1/users/${userId}/debits`, {
      method: 'POST',
      body: { amount: 10, reference: `boost-${userId}` },
    });
    // Answered while the wallet is still locked: by the deadline, not by the database.
    expect(stuck.status).toBe(503);
    expect(stuck.headers.get('retry-after')).toBe('1');
    expect(((await stuck.json()) as { error: { code: string } }).error.code).toBe('database_unavailable');
    await lock.release();

    // The first call applies once the lock goes; the retry with the reference finds it.
    await eventually('the stuck debit applied', async () => {
      const row = await stack.db
        .selectFrom('ledger_entries')
        .select('reference')
        .where('reference', '=', `debit:boost-${userId}`)
        .executeTakeFirst();
      return row !== undefined;
    });
    const retry = await stack.apiRequest(`/v1/users/${userId}/debits`, {
      method: 'POST',
      body: { amount: 10, reference: `boost-${userId}` },
    });
    expect(retry.status).toBe(200);
    expect(await retry.json()).toMatchObject({ ledgerReference: `debit:boost-${userId}`, balance: 90 });
    const debits = await stack.db
      .selectFrom('ledger_entries')
      .select('amount')
      .where('user_id', '=', userId)
      .where('amount', '<', 0)
      .execute();
    expect(debits).toEqual([{ amount: -10 }]);
  });

  it('answers a read stuck behind a table lock 503, and drops its late answer without harm', async () => {
    const userId = `deadline-read-${Date.now().toString(36)}`;
    const lock = await holding('LOCK TABLE ledger_entries IN ACCESS EXCLUSIVE MODE');
    const stuck = await stack.apiRequest(`/v1/users/${userId}/ledger`);
    expect(stuck.status).toBe(503);
    await lock.release();
    // The late answer was dropped; the api answers the next call as usual.
    const after = await stack.apiRequest(`/v1/users/${userId}/ledger`);
    expect(after.status).toBe(200);
  });
});
