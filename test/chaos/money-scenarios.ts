// The app's money paths under faults (issue 35; docs/holds.md, docs/lots.md): a seeded mix of
// grants (with and without expiry), debits, holds with short lives, full and partial captures and
// releases through the api, each retried like the app (same Idempotency-Key, same body), some sent
// again with the same reference and a new key; token packs and their refunds through ingest; the
// credit-expiry sweeper running every 500 ms; while the api and a worker are killed with kill -9,
// Postgres crashes, and the api is cut off from Postgres mid-hold and mid-capture. Afterwards each
// app call's outcome is checked against what it was answered (`checkMoneyOutcomes`), besides the
// invariants every scenario gets (lots, holds, `ledger verify`: invariants.ts).
import { sql } from 'kysely';
import { services } from './partition-scenarios';
import type { ProfiledScenario } from './process-fault-scenarios';
import type { ScenarioContext } from './scenario';
import { chaosApiClientTimeoutMs, chaosIdempotencyLockMs } from './support/chaos-cluster';
import {
  rcPurchase,
  rcRefund,
  stripeDisputeEvent,
  stripeDisputeState,
  stripePackPaid,
  stripePackRefunded,
} from './support/events';
import type { Violation } from './support/invariants';
import { isFinal } from './support/keyed-requests';
import type { PodFault } from './support/network';
import type { Prng } from './support/prng';
import type { SimulatedEvent } from './support/provider-simulator';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const size = (ctx: ScenarioContext, short: number, full: number) => (ctx.profile === 'full' ? full : short);

type MoneyKind = 'grant' | 'debit' | 'hold' | 'capture' | 'release';

/** One attempt's answer (status 0: none: the api died, or 10 s passed) and when it was sent. */
interface Attempt {
  status: number;
  body: string;
  startedAt: number;
  ms: number;
}

/** One app call, sent with its key until a final answer; `again`: the same reference (or hold), a new key. */
export interface MoneyOp {
  kind: MoneyKind;
  user: string;
  key: string;
  path: string;
  body: Record<string, unknown>;
  amount: number;
  /** The app's reference (grant, debit, hold). */
  reference?: string;
  /** The hold a capture or release ends. */
  holdId?: string;
  attempts: Attempt[];
  final?: Attempt;
  again?: Attempt;
}

const is2xx = (attempt: Attempt | undefined) => attempt !== undefined && attempt.status >= 200 && attempt.status < 300;

async function postOnce(ctx: ScenarioContext, op: MoneyOp, key: string): Promise<Attempt> {
  const startedAt = Date.now();
  try {
    const response = await ctx.cluster.apiRequest(op.path, {
      method: 'POST',
      body: op.body,
      headers: { 'idempotency-key': key },
    });
    const body = await response.text();
    return { status: response.status, body, startedAt, ms: Date.now() - startedAt };
  } catch {
    return { status: 0, body: '', startedAt, ms: Date.now() - startedAt };
  }
}

/** Like the app: the same key and body until an answer below 500 and not 409 in use. */
async function untilFinal(ctx: ScenarioContext, op: MoneyOp, key: string): Promise<Attempt | undefined> {
  const deadline = Date.now() + 120_000 + chaosIdempotencyLockMs;
  for (let attempt = 0; Date.now() < deadline; attempt += 1) {
    const answer = await postOnce(ctx, op, key);
    op.attempts.push(answer);
    const inUse = answer.status === 409 && answer.body.includes('idempotency_key_in_use');
    if (isFinal({ status: answer.status, body: answer.body, replayed: false }) || (answer.status === 409 && !inUse))
      return answer;
    await sleep(Math.min(1_000, 100 * 2 ** Math.min(attempt, 4)));
  }
  return undefined;
}

/**
 * When the last lot granted with an expiry, or the last short hold, of these ops comes due (epoch
 * ms; 0 when none). A hold's expiry counts from its creation, at the latest its last answer.
 * Holds of a minute or more are captured or released by the scenario, or outlast its checks.
 */
function latestDue(ops: MoneyOp[]): number {
  let latest = 0;
  for (const op of ops) {
    const body = op.body as { expiresAt?: string; expiresInSeconds?: number };
    if (op.kind === 'grant' && body.expiresAt) latest = Math.max(latest, Date.parse(body.expiresAt));
    const last = op.attempts.at(-1);
    if (op.kind === 'hold' && last && body.expiresInSeconds !== undefined && body.expiresInSeconds < 60)
      latest = Math.max(latest, last.startedAt + last.ms + body.expiresInSeconds * 1000);
  }
  return latest;
}

/**
 * Waits until `dueBy`, then until the sweeper has nothing left of this scenario's users to do: no
 * lot past its expiry with tokens no active hold reserves (expireDueLots' own condition), no lapsed
 * hold unsettled. Gives up after 30 s (the harness's rounds and checks then report what is left;
 * `left` -1: the database could not be read).
 */
async function untilDueSwept(
  ctx: ScenarioContext,
  prefix: string,
  dueBy: number,
): Promise<{ left: number; waitedMs: number }> {
  await sleep(Math.max(0, dueBy - Date.now()));
  const from = Date.now();
  const users = `${prefix}-%`;
  for (;;) {
    const left = await sql<{ left: number }>`
      SELECT (SELECT count(*)::int FROM credit_lots l
               WHERE l.user_id LIKE ${users} AND l.remaining > 0 AND l.expires_at IS NOT NULL
                 AND l.expires_at <= now()
                 AND l.remaining > (SELECT coalesce(sum(hl.amount), 0) FROM hold_lots hl JOIN holds h ON h.id = hl.hold_id
                                     WHERE hl.lot_id = l.id AND h.status = 'held' AND h.settled_at IS NULL
                                       AND h.expires_at > now()))
           + (SELECT count(*)::int FROM holds
               WHERE user_id LIKE ${users} AND status = 'held' AND settled_at IS NULL AND expires_at <= now()) AS left`
      .execute(ctx.cluster.db)
      .then(
        (result) => result.rows[0]?.left ?? 0,
        () => -1,
      );
    if (left === 0 || Date.now() - from > 30_000) return { left, waitedMs: Date.now() - from };
    await sleep(250);
  }
}

interface UserState {
  user: string;
  /** Holds placed and not yet captured or released by this scenario (they may have expired). */
  open: { id: string; amount: number }[];
}

/** The next call of `state`'s user, by the PRNG; holds short-lived mostly, some left open to the end. */
function nextOp(rng: Prng, prefix: string, state: UserState, n: number): MoneyOp {
  const user = state.user;
  const base = `/v1/users/${user}`;
  const key = `${prefix}-k${n}-${rng.int(0, 2 ** 30)}`;
  const roll = rng.int(0, 99);
  const open = state.open.length > 0;
  if (open && roll < 20) {
    const index = rng.int(0, state.open.length - 1);
    const [hold] = state.open.splice(index, 1) as [{ id: string; amount: number }];
    const partial = rng.chance(0.5) && hold.amount > 1;
    const amount = partial ? rng.int(1, hold.amount - 1) : hold.amount;
    return {
      kind: 'capture',
      user,
      key,
      path: `${base}/holds/${hold.id}/capture`,
      body: partial ? { amount } : {},
      amount,
      holdId: hold.id,
      attempts: [],
    };
  }
  if (open && roll < 32) {
    const index = rng.int(0, state.open.length - 1);
    const [hold] = state.open.splice(index, 1) as [{ id: string; amount: number }];
    return {
      kind: 'release',
      user,
      key,
      path: `${base}/holds/${hold.id}/release`,
      body: {},
      amount: hold.amount,
      holdId: hold.id,
      attempts: [],
    };
  }
  const reference = `${prefix}-r${n}`;
  if (roll < 50) {
    const amount = rng.int(20, 80);
    const expires = rng.chance(0.5);
    return {
      kind: 'grant',
      user,
      key,
      path: `${base}/grants`,
      body: {
        amount,
        reference,
        ...(expires ? { expiresAt: new Date(Date.now() + rng.int(3_000, 8_000)).toISOString() } : {}),
      },
      amount,
      reference,
      attempts: [],
    };
  }
  if (roll < 72) {
    const amount = rng.int(5, 30);
    return {
      kind: 'debit',
      user,
      key,
      path: `${base}/debits`,
      body: { amount, reference },
      amount,
      reference,
      attempts: [],
    };
  }
  const amount = rng.int(5, 40);
  const expiresInSeconds = rng.chance(0.75) ? rng.int(2, 5) : 600;
  return {
    kind: 'hold',
    user,
    key,
    path: `${base}/holds`,
    body: { amount, reference, expiresInSeconds },
    amount,
    reference,
    attempts: [],
  };
}

/**
 * Each op's outcome in the database against its answers: a grant, debit or hold answered 2xx
 * exists exactly once (a hold: one row under its reference, the answered id), one never answered
 * 2xx at most once, and every 2xx answer of one reference (its retries, a new key's) names the
 * same entry; a capture answered 2xx left its hold captured for what it answered, with one
 * `hold:{id}:capture` of that amount; a release answered 2xx left its hold released.
 */
export async function checkMoneyOutcomes(ctx: ScenarioContext, ops: MoneyOp[]): Promise<Violation[]> {
  const violations: Violation[] = [];
  const fail = (detail: string) => {
    if (violations.length < 20) violations.push({ invariant: 'app calls = their answers', detail });
  };
  const { db } = ctx.cluster;
  const users = [...new Set(ops.map((op) => op.user))];
  if (users.length === 0) return violations;
  const { rows: entries } = await sql<{ reference: string; amount: string; count: number }>`
    SELECT reference, min(amount)::text AS amount, count(*)::int AS count FROM ledger_entries
     WHERE user_id = ANY(${users}::text[]) GROUP BY reference`.execute(db);
  const entryOf = new Map(entries.map((row) => [row.reference, row]));
  const holds = await db
    .selectFrom('holds')
    .select(['id', 'user_id', 'reference', 'amount', 'status', 'captured'])
    .where('user_id', 'in', users)
    .execute();
  const holdByRef = new Map(holds.map((hold) => [`${hold.user_id} ${hold.reference}`, hold]));
  const holdById = new Map(holds.map((hold) => [hold.id, hold]));
  for (const op of ops) {
    const answered = [...op.attempts, ...(op.again ? [op.again] : [])].filter(is2xx);
    const bodies = answered.map((attempt) => JSON.parse(attempt.body) as Record<string, unknown>);
    const label = `${op.kind} ${op.user} ${op.reference ?? op.holdId}`;
    const same = (fields: string[]) => {
      const first = bodies[0];
      if (!first) return;
      for (const body of bodies.slice(1)) {
        for (const field of fields) {
          if (JSON.stringify(body[field]) !== JSON.stringify(first[field])) {
            fail(
              `${label}: one answer says ${field} ${JSON.stringify(first[field])}, another ${JSON.stringify(body[field])}`,
            );
          }
        }
      }
    };
    if (op.kind === 'grant' || op.kind === 'debit') {
      const reference = `${op.kind}:${op.reference}`;
      const entry = entryOf.get(reference);
      const count = entry?.count ?? 0;
      if (count > 1) fail(`${label}: ${count} ledger entries`);
      if (answered.length > 0) {
        if (count !== 1) fail(`${label}: answered ${answered[0]?.status} and ${count} ledger entries`);
        const signed = op.kind === 'grant' ? op.amount : -op.amount;
        if (entry && Number(entry.amount) !== signed) fail(`${label}: entry of ${entry.amount}, asked ${signed}`);
        same(
          op.kind === 'grant'
            ? ['ledgerReference', 'lotId', 'amount', 'balance']
            : ['ledgerReference', 'amount', 'balance', 'draws'],
        );
      }
    } else if (op.kind === 'hold') {
      const hold = holdByRef.get(`${op.user} ${op.reference}`);
      if (answered.length > 0) {
        if (!hold) fail(`${label}: answered ${answered[0]?.status} and no hold row`);
        else if (bodies.some((body) => body.id !== hold.id))
          fail(`${label}: answered another id than its row ${hold.id}`);
        same(['id', 'amount', 'expiresAt']);
      }
    } else {
      const hold = op.holdId ? holdById.get(op.holdId) : undefined;
      if (answered.length === 0) continue;
      if (!hold) {
        fail(`${label}: answered ${answered[0]?.status} for no hold row`);
        continue;
      }
      if (op.kind === 'release') {
        if (hold.status !== 'released') fail(`${label}: answered 2xx, hold is ${hold.status}`);
        continue;
      }
      same(['captured', 'ledgerReference', 'balance']);
      const captured = Number(bodies[0]?.captured);
      const entry = entryOf.get(`hold:${hold.id}:capture`);
      if (hold.status !== 'captured' || Number(hold.captured) !== captured) {
        fail(`${label}: answered captured ${captured}, hold is ${hold.status} with ${hold.captured}`);
      }
      if (captured !== op.amount) fail(`${label}: asked ${op.amount}, answered captured ${captured}`);
      if (entry?.count !== 1 || Number(entry?.amount) !== -captured) {
        fail(`${label}: captured ${captured}, capture entries ${entry ? `${entry.count} × ${entry.amount}` : 'none'}`);
      }
    }
  }
  return violations;
}

/**
 * How long the app waits for the api during a partition: its client timeout. The api has no answer
 * deadline of its own (ingest has INGEST_ANSWER_DEADLINE_MS): a call is answered 503 once one of
 * its database waits gives up, the statement's DATABASE_QUERY_TIMEOUT_MS (the chaos api's 4 s) or
 * the pool's 5 s connect, and one call can wait on both in turn (measured: 9.2 s). So the bound
 * here is the app's timeout, not ingest's 7 s (docs/reliability.md).
 */
export const apiPromptAnswerMs = chaosApiClientTimeoutMs;

/**
 * What the api answered to requests in flight while it was cut off from Postgres (sent before the
 * cut or during it): each a 5xx or a success within `apiPromptAnswerMs`, never no answer.
 */
function partitionAnswers(ops: MoneyOp[], windows: { from: number; to: number; what: string }[]) {
  const violations: Violation[] = [];
  const figures: string[] = [];
  for (const window of windows) {
    const during = ops
      .flatMap((op) => [...op.attempts, ...(op.again ? [op.again] : [])].map((attempt) => ({ op, attempt })))
      .filter(({ attempt }) => attempt.startedAt < window.to && attempt.startedAt + attempt.ms > window.from);
    const statuses: Record<string, number> = {};
    for (const { attempt } of during) statuses[attempt.status] = (statuses[attempt.status] ?? 0) + 1;
    const slow = during.filter(({ attempt }) => attempt.status === 0 || attempt.ms > apiPromptAnswerMs);
    for (const { op, attempt } of slow.slice(0, 5)) {
      violations.push({
        invariant: 'prompt answers during a partition',
        detail: `${window.what}: ${op.kind} ${op.user} sent ${attempt.startedAt - window.from} ms after the cut began ${
          attempt.status === 0
            ? `had no answer after ${attempt.ms} ms`
            : `answered ${attempt.status} after ${attempt.ms} ms`
        } (bound ${apiPromptAnswerMs} ms)`,
      });
    }
    const maxMs = during.reduce((max, { attempt }) => Math.max(max, attempt.ms), 0);
    figures.push(
      `${window.what} for ${window.to - window.from} ms: ${during.length} requests in flight during it ${JSON.stringify(statuses)}, slowest ${maxMs} ms`,
    );
  }
  return { violations, figures };
}

/**
 * A chargeback of one Stripe pack during the faults: just before it, a hold takes most of what
 * the wallet has available (so the take-back finds little free and records a shortfall); the
 * dispute's `created`, `funds_withdrawn` and a resend of it under a new event id race each other;
 * once the dispute is applied the hold is released, captured in part, or left to lapse (what it
 * frees settles the shortfall first); some disputes are then won (`funds_reinstated`, sent twice).
 */
interface Chargeback {
  user: string;
  dispute: { id: string; charge: string; paymentIntent: string };
  atMs: number;
  reinstate: boolean;
  holdEnd: 'release' | 'capture' | 'lapse';
  /** The hold placed just before the dispute (none when nothing was available). */
  hold?: MoneyOp;
  /** Its release or capture, sent once the dispute's row was committed. */
  end?: MoneyOp;
  /** The dispute's row appeared (ms after the scenario started), or never. */
  appliedAtMs?: number;
  events: SimulatedEvent[];
}

function planChargeback(rng: Prng, prefix: string, n: number, user: string, atMs: number): Chargeback {
  return {
    user,
    dispute: { id: `dp_${prefix}_${n}`, charge: `ch_${prefix}_${n}`, paymentIntent: `pi_${prefix}_${n}` },
    atMs,
    reinstate: rng.chance(0.35),
    holdEnd: rng.pick(['release', 'capture', 'lapse'] as const),
    events: [],
  };
}

async function untilRow(query: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await query().catch(() => false)) return true;
    await sleep(100);
  }
  return false;
}

async function runChargeback(
  ctx: ScenarioContext,
  chargeback: Chargeback,
  ops: MoneyOp[],
  started: number,
): Promise<void> {
  const { cluster } = ctx;
  const { db } = cluster;
  const { user, dispute } = chargeback;
  await sleep(Math.max(0, started + chargeback.atMs - Date.now()));
  // The pack is credited first (Stripe disputes a charge that succeeded).
  await untilRow(
    async () =>
      (
        await sql<{
          n: number;
        }>`SELECT count(*)::int AS n FROM ledger_entries WHERE reference = ${`stripe:payment:${dispute.paymentIntent}`}`.execute(
          db,
        )
      ).rows[0]?.n === 1,
    60_000,
  );
  const base = `/v1/users/${user}`;
  // What the wallet has available right now, as the api's 402 to a hold it cannot cover says (read
  // just before the real hold, so the user's own calls move it as little as possible meanwhile).
  const probe: MoneyOp = {
    kind: 'hold',
    user,
    key: `cb-probe-${dispute.id}-k`,
    path: `${base}/holds`,
    body: { amount: 1_000_000, reference: `cb-probe-${dispute.id}`, expiresInSeconds: 60 },
    amount: 1_000_000,
    reference: `cb-probe-${dispute.id}`,
    attempts: [],
  };
  ops.push(probe);
  probe.final = await untilFinal(ctx, probe, probe.key);
  const available =
    probe.final?.status === 402 ? Number((JSON.parse(probe.final.body) as { available?: number }).available ?? 0) : 0;
  if (available > 1) {
    const amount = Math.max(1, available - ctx.rng.int(0, 20));
    const reference = `cb-hold-${dispute.id}`;
    const hold: MoneyOp = {
      kind: 'hold',
      user,
      key: `${reference}-k`,
      path: `${base}/holds`,
      body: { amount, reference, expiresInSeconds: chargeback.holdEnd === 'lapse' ? ctx.rng.int(3, 5) : 60 },
      amount,
      reference,
      attempts: [],
    };
    ops.push(hold);
    chargeback.hold = hold;
    hold.final = await untilFinal(ctx, hold, hold.key);
  }
  const send = (events: SimulatedEvent[]) => {
    chargeback.events.push(...events);
    ctx.events.push(...events);
    return ctx.sim.deliverAll(events, events.length);
  };
  cluster.stripe.putDispute(stripeDisputeState(dispute, 'withdrawn'));
  await send([
    stripeDisputeEvent(`evt_${dispute.id}_created`, 'created', dispute),
    stripeDisputeEvent(`evt_${dispute.id}_withdrawn`, 'funds_withdrawn', dispute),
    stripeDisputeEvent(`evt_${dispute.id}_withdrawn_resent`, 'funds_withdrawn', dispute),
  ]);
  const applied = await untilRow(
    async () =>
      (await db.selectFrom('stripe_disputes').select('dispute_id').where('dispute_id', '=', dispute.id).execute())
        .length === 1,
    60_000,
  );
  if (applied) chargeback.appliedAtMs = Date.now() - started;
  const holdId = is2xx(chargeback.hold?.final)
    ? (JSON.parse(chargeback.hold?.final?.body ?? '{}') as { id?: string }).id
    : undefined;
  if (applied && holdId && chargeback.hold && chargeback.holdEnd !== 'lapse') {
    const held = chargeback.hold.amount;
    const capture = chargeback.holdEnd === 'capture' && held > 1;
    const amount = capture ? ctx.rng.int(1, held - 1) : held;
    const end: MoneyOp = {
      kind: capture ? 'capture' : 'release',
      user,
      key: `cb-end-${dispute.id}-k`,
      path: `${base}/holds/${holdId}/${capture ? 'capture' : 'release'}`,
      body: capture ? { amount } : {},
      amount,
      holdId,
      attempts: [],
    };
    ops.push(end);
    chargeback.end = end;
    end.final = await untilFinal(ctx, end, end.key);
  }
  if (chargeback.reinstate) {
    cluster.stripe.putDispute(stripeDisputeState(dispute, 'reinstated'));
    await send([
      stripeDisputeEvent(`evt_${dispute.id}_reinstated`, 'funds_reinstated', dispute),
      stripeDisputeEvent(`evt_${dispute.id}_reinstated_resent`, 'funds_reinstated', dispute),
    ]);
  }
}

/**
 * The chargebacks against the database, once quiet: each dispute applied once (one
 * `stripe:dispute:{id}` entry at most, one `:reinstated` at most, one event applying each side,
 * the others `dispute_already_applied` or moving nothing), owing the pack's 100 tokens; what it
 * took is its entry plus what holds and refunds of in-flight debits recovered for it since
 * (`tokens_taken`), and the rest is its open shortfall; a won one gave back exactly what it took
 * and left nothing open. A hold that ended (released, or captured for less) after the dispute was
 * applied, while the dispute's shortfall was open and the hold was active at the take-back, settled
 * it first (`hold:{id}:release:recovered`). That it never took held tokens is invariant 13's (no
 * entry, at any time, leaves a lot below what the holds active then reserve of it).
 */
export async function checkChargebacks(
  ctx: ScenarioContext,
  chargebacks: Chargeback[],
): Promise<{ violations: Violation[]; notes: string[] }> {
  const violations: Violation[] = [];
  const fail = (detail: string) => {
    if (violations.length < 20) violations.push({ invariant: 'chargebacks applied once, held tokens spared', detail });
  };
  if (chargebacks.length === 0) return { violations, notes: [] };
  const { db } = ctx.cluster;
  const ids = chargebacks.map((chargeback) => chargeback.dispute.id);
  const disputes = await db
    .selectFrom('stripe_disputes')
    .select(['dispute_id', 'tokens_owed', 'tokens_taken', 'shortfall', 'tokens_reinstated', 'reinstated_at'])
    .where('dispute_id', 'in', ids)
    .execute();
  const rowOf = new Map(disputes.map((row) => [row.dispute_id, row]));
  const { rows: entries } = await sql<{ reference: string; amount: string; count: number }>`
    SELECT reference, sum(amount)::text AS amount, count(*)::int AS count FROM ledger_entries
     WHERE reference = ANY(${ids.flatMap((id) => [`stripe:dispute:${id}`, `stripe:dispute:${id}:reinstated`])}::text[])
     GROUP BY reference`.execute(db);
  const entryOf = new Map(entries.map((row) => [row.reference, row]));
  const shortfalls = await db
    .selectFrom('take_back_shortfalls')
    .select(['id', 'source_id', 'shortfall', 'recovered', 'closed_at', 'last_ledger_entry_id', 'created_at'])
    .where('source', '=', 'stripe_dispute')
    .where('source_id', 'in', ids)
    .execute();
  const eventIds = chargebacks.flatMap((chargeback) => chargeback.events.map((event) => event.id));
  const outcomes =
    eventIds.length === 0
      ? []
      : await db
          .selectFrom('inbox_events')
          .select(['provider_event_id', 'status', 'outcome_code'])
          .where('provider', '=', 'stripe')
          .where('provider_event_id', 'in', eventIds)
          .execute();
  const outcomeOf = new Map(outcomes.map((row) => [row.provider_event_id, row]));
  let withShortfall = 0;
  let recoveredByHolds = 0;
  let reinstated = 0;
  for (const chargeback of chargebacks) {
    const id = chargeback.dispute.id;
    const label = `dispute ${id} (${chargeback.user})`;
    const row = rowOf.get(id);
    const applying = chargeback.events
      .map((event) => outcomeOf.get(event.id)?.outcome_code)
      .filter((code) => code === 'dispute_funds_withdrawn' || code === 'dispute_funds_reinstated');
    for (const code of new Set(applying)) {
      const times = applying.filter((other) => other === code).length;
      if (times > 1) fail(`${label}: ${times} events applied as ${code}`);
    }
    if (!row) {
      fail(`${label}: its funds_withdrawn was answered 200 and there is no stripe_disputes row`);
      continue;
    }
    const taken = entryOf.get(`stripe:dispute:${id}`);
    const given = entryOf.get(`stripe:dispute:${id}:reinstated`);
    if ((taken?.count ?? 0) > 1 || (given?.count ?? 0) > 1)
      fail(`${label}: ${taken?.count ?? 0} take-back and ${given?.count ?? 0} reinstatement entries`);
    if (Number(row.tokens_owed) !== 100) fail(`${label}: owes ${row.tokens_owed} of a 100-token pack never refunded`);
    const rows = shortfalls.filter((shortfall) => shortfall.source_id === id);
    const recovered = rows.reduce((sum, shortfall) => sum + Number(shortfall.recovered), 0);
    const tookAtOnce = -Number(taken?.amount ?? 0);
    if (Number(row.tokens_taken) !== tookAtOnce + recovered)
      fail(
        `${label}: tokens_taken ${row.tokens_taken}, its entry took ${tookAtOnce} and ${recovered} were recovered for it`,
      );
    if (rows.length > 0) withShortfall += 1;
    if (row.reinstated_at) {
      reinstated += 1;
      if (
        Number(given?.amount ?? 0) !== Number(row.tokens_reinstated) ||
        Number(row.tokens_reinstated) !== Number(row.tokens_taken)
      )
        fail(
          `${label}: won, took ${row.tokens_taken}, reinstated ${row.tokens_reinstated}, gave back ${given?.amount ?? 0}`,
        );
      if (rows.some((shortfall) => shortfall.closed_at === null))
        fail(`${label}: won, and a shortfall of it is still open`);
    } else {
      if (given) fail(`${label}: not won, and gave back ${given.amount}`);
      const open = rows
        .filter((shortfall) => shortfall.closed_at === null)
        .reduce((sum, shortfall) => sum + Number(shortfall.shortfall) - Number(shortfall.recovered), 0);
      if (open !== Number(row.shortfall)) fail(`${label}: shortfall ${row.shortfall}, its open shortfall rows ${open}`);
    }
    // The hold ended after the dispute was applied: what it freed settled the open shortfall of a
    // take-back that ran while it was active.
    const end = chargeback.end;
    if (!end || !is2xx(end.final) || !end.holdId) continue;
    const hold = await db
      .selectFrom('holds')
      .select(['id', 'ledger_marker', 'expires_at', 'captured', 'released', 'status'])
      .where('id', '=', end.holdId)
      .executeTakeFirst();
    if (!hold) continue;
    const recovery = await db
      .selectFrom('ledger_entries')
      .select('amount')
      .where('reference', '=', `hold:${hold.id}:release:recovered`)
      .executeTakeFirst();
    const freed = Number(hold.released ?? 0);
    if (recovery) {
      recoveredByHolds += 1;
      if (-Number(recovery.amount) > freed)
        fail(`${label}: ${hold.id} freed ${freed} and recovered ${-Number(recovery.amount)}`);
      continue;
    }
    const stillOwed = rows.filter(
      (shortfall) =>
        shortfall.closed_at === null &&
        Number(shortfall.recovered) < Number(shortfall.shortfall) &&
        Number(hold.ledger_marker) <= Number(shortfall.last_ledger_entry_id) &&
        new Date(shortfall.created_at) < new Date(hold.expires_at),
    );
    if (freed > 0 && stillOwed.length > 0)
      fail(
        `${label}: ${hold.id} was active at the take-back, freed ${freed} when it was ${hold.status} after it, and settled none of the open shortfall`,
      );
  }
  const notes = [
    `${chargebacks.length} chargebacks: ${chargebacks.filter((chargeback) => chargeback.hold && is2xx(chargeback.hold.final)).length} met a hold placed just before (most of what was available), ${withShortfall} left a shortfall, ${recoveredByHolds} had it settled by the hold's end (${chargebacks
      .map(
        (chargeback) =>
          `${chargeback.holdEnd}${chargeback.end ? ` ${chargeback.end.final?.status ?? 'no answer'}` : ''}`,
      )
      .join(
        ', ',
      )}), ${reinstated} won; applied at ${chargebacks.map((chargeback) => chargeback.appliedAtMs ?? 'never').join(', ')} ms`,
  ];
  return { violations, notes };
}

const moneyPaths: ProfiledScenario = {
  name: 'money-paths',
  // Lots come due and holds lapse after the settle: the credit-expiry sweeper (every 500 ms in
  // the chaos workers) would write while the checks read (one CI run's false phantom messages).
  quiesceBeforeChecks: true,
  async run(ctx) {
    const { cluster } = ctx;
    const prefix = 'money';
    const durationMs = size(ctx, 16_000, 60_000);
    const users: UserState[] = Array.from({ length: size(ctx, 6, 12) }, (_, i) => ({
      user: `${prefix}-u${i}`,
      open: [],
    }));
    const plan = ctx.rng.fork('plan');
    const ops: MoneyOp[] = [];
    /** The kinds of the ops with a request in flight now (the partition's trigger). */
    const inFlight = new Map<MoneyKind, number>();
    let counter = 0;
    const send = async (op: MoneyOp, state: UserState) => {
      ops.push(op);
      inFlight.set(op.kind, (inFlight.get(op.kind) ?? 0) + 1);
      try {
        op.final = await untilFinal(ctx, op, op.key);
      } finally {
        inFlight.set(op.kind, (inFlight.get(op.kind) ?? 1) - 1);
      }
      if (op.kind === 'hold' && is2xx(op.final)) {
        const id = (JSON.parse(op.final?.body ?? '{}') as { id?: string }).id;
        if (id) state.open.push({ id, amount: op.amount });
      }
      // The app's own timeout fired just after the answer: the same key again (replayed), or
      // the same reference (the same hold) under a new key: the same entry.
      if (op.final && plan.chance(0.2)) await untilFinal(ctx, op, op.key);
      if (op.final && op.kind !== 'release' && plan.chance(0.2))
        op.again = await untilFinal(ctx, op, `${op.key}-again`);
    };

    // Each user opens with a grant that never expires (so there is something to spend), then
    // calls one at a time, a few hundred milliseconds apart, until the end.
    const started = Date.now();
    const traffic = Promise.all(
      users.map(async (state) => {
        const opening: MoneyOp = {
          kind: 'grant',
          user: state.user,
          key: `${prefix}-open-${state.user}`,
          path: `/v1/users/${state.user}/grants`,
          body: { amount: 200, reference: `${prefix}-open-${state.user}` },
          amount: 200,
          reference: `${prefix}-open-${state.user}`,
          attempts: [],
        };
        await send(opening, state);
        while (Date.now() - started < durationMs) {
          counter += 1;
          await send(nextOp(plan, prefix, state, counter), state);
          await sleep(plan.int(50, 300));
        }
      }),
    );

    // Token packs through ingest over the first half, then refunds of a third of them.
    const purchases: SimulatedEvent[] = [];
    const refunds: SimulatedEvent[] = [];
    const chargebacks: Chargeback[] = [];
    const disputePlan = ctx.rng.fork('chargebacks');
    for (let n = 0; n < size(ctx, 8, 30); n += 1) {
      const user = plan.pick(users).user;
      const refund = plan.chance(0.35);
      if (plan.chance(0.5)) {
        const id = `${prefix}-rc-${n}`;
        purchases.push(rcPurchase(id, user));
        if (refund) refunds.push(rcRefund(`${id}-refund`, user, `tx-${id}`));
      } else {
        purchases.push(stripePackPaid(`evt_${prefix}_${n}`, `pi_${prefix}_${n}`, user));
        if (refund)
          refunds.push(stripePackRefunded(`evt_${prefix}_${n}_refund`, `ch_${prefix}_${n}`, `pi_${prefix}_${n}`));
        // Most packs not refunded are disputed (a chargeback), from the middle of the run on.
        else if (disputePlan.chance(0.75))
          chargebacks.push(
            planChargeback(disputePlan, prefix, n, user, Math.floor(durationMs * disputePlan.int(30, 75)) / 100),
          );
      }
    }
    ctx.events.push(...purchases, ...refunds);
    const ingest = ctx.sim
      .deliverAll(purchases, 4, durationMs / 2)
      .then(() => ctx.sim.deliverAll(refunds, 4, durationMs / 3));

    // The faults, in order, each at its time.
    const windows: { from: number; to: number; what: string }[] = [];
    const triggers: string[] = [];
    const at = async (ms: number) => sleep(Math.max(0, started + ms - Date.now()));
    const killApi = async () => {
      await cluster.api.ready();
      cluster.api.kill9();
      ctx.faults.push('kill -9 of the api mid-call');
    };
    const killWorker = async () => {
      const worker = plan.pick(cluster.workers);
      await worker.ready();
      worker.kill9();
      ctx.faults.push('kill -9 of a worker (credit-expiry sweeper among its roles)');
    };
    const crashPostgres = async (downMs: number) => {
      await cluster.crashPostgres(downMs);
      ctx.faults.push('Postgres crash (immediate stop, recovery on start)');
    };
    const cutApi = async (kind: 'hold' | 'capture', cutMs: number) => {
      if (!cluster.api.pod) {
        ctx.notes.push(`api ↔ Postgres mid-${kind}: not run (the cluster is on the host's network)`);
        return;
      }
      await cluster.api.ready();
      const deadline = Date.now() + 3_000;
      while ((inFlight.get(kind) ?? 0) === 0 && Date.now() < deadline) await sleep(2);
      triggers.push(`mid-${kind}: ${inFlight.get(kind) ?? 0} ${kind} calls in flight at the cut`);
      let fault: PodFault | undefined;
      const from = Date.now();
      try {
        fault = cluster.api.pod.cut([services(cluster).postgres]);
        await sleep(cutMs);
      } finally {
        fault?.heal();
      }
      windows.push({ from, to: Date.now(), what: `api ↔ Postgres cut mid-${kind}` });
      ctx.faults.push(`api ↔ Postgres cut mid-${kind} (silent drop), then healed`);
    };
    const schedule: [number, () => Promise<void>][] =
      ctx.profile === 'full'
        ? [
            [2_000, killApi],
            [6_000, killWorker],
            [10_000, () => cutApi('hold', 10_000)],
            [24_000, () => crashPostgres(2_000)],
            [30_000, killApi],
            [31_000, killWorker],
            [36_000, () => cutApi('capture', 10_000)],
            [50_000, () => crashPostgres(1_500)],
            [55_000, killApi],
          ]
        : [
            // Each cut's requests are answered up to ~7 s after it began: the next fault waits for that.
            [1_000, killApi],
            [2_000, killWorker],
            [3_000, () => cutApi('hold', 2_500)],
            [10_000, () => cutApi('capture', 2_500)],
            [16_500, () => crashPostgres(1_000)],
          ];
    const faults = (async () => {
      for (const [ms, fault] of schedule) {
        await at(ms);
        await fault();
      }
    })();
    const disputes = Promise.all(chargebacks.map((chargeback) => runChargeback(ctx, chargeback, ops, started)));
    await Promise.all([traffic, ingest, faults, disputes]);
    if (chargebacks.length > 0) ctx.faults.push('chargebacks (Stripe disputes) while holds reserve most of the wallet');
    // The lots granted with an expiry and the short holds come due up to seconds after the last
    // call, and the credit-expiry sweeper writes for each (the expiry entry and its message, a
    // lapsed hold's settlement). Waited for here, all due and swept, so the harness's settle and
    // stop have nothing left to race: otherwise a sweep can write between each settle and the
    // workers' stop (settleAndQuiesce's three rounds ran out in one CI run, seed 1413720740).
    const swept = await untilDueSwept(ctx, prefix, latestDue(ops));
    if (swept.left !== 0)
      ctx.notes.push(
        swept.left < 0
          ? `the sweep's progress could not be read for ${swept.waitedMs} ms after the last lot or hold came due`
          : `${swept.left} lots or lapsed holds still unswept ${swept.waitedMs} ms after the last came due`,
      );
    ctx.faults = [...new Set(ctx.faults)];

    // Every call answered in the end; then its outcome against the database once everything
    // settled and the workers (the credit-expiry sweeper among them) are stopped: the harness
    // runs `quietChecks` then, before the lots and holds invariants.
    const unanswered = ops.filter((op) => !op.final);
    if (unanswered.length > 0) {
      ctx.violations.push({
        invariant: 'every app call gets its answer',
        detail: `${unanswered.length} calls never got a final answer (${unanswered
          .slice(0, 3)
          .map((op) => `${op.kind} ${op.user}`)
          .join(', ')})`,
      });
    }
    const partition = partitionAnswers(ops, windows);
    ctx.violations.push(...partition.violations);

    const byKind: Record<string, Record<string, number>> = {};
    for (const op of ops) {
      const finals = byKind[op.kind] ?? {};
      byKind[op.kind] = finals;
      const status = String(op.final?.status ?? 'none');
      finals[status] = (finals[status] ?? 0) + 1;
    }
    const attempts: Record<string, number> = {};
    for (const op of ops)
      for (const attempt of op.attempts) attempts[attempt.status] = (attempts[attempt.status] ?? 0) + 1;
    ctx.notes.push(
      `${ops.length} app calls over ${users.length} users, final answers by kind ${JSON.stringify(byKind)}; every attempt ${JSON.stringify(attempts)}; ${
        ops.filter((op) => op.attempts.length > 1).length
      } retried with their key, ${ops.filter((op) => op.again).length} sent again under a new key`,
      ...triggers,
      ...partition.figures,
    );
    ctx.quietChecks.push(async () => {
      ctx.violations.push(...(await checkMoneyOutcomes(ctx, ops)));
      const disputeCheck = await checkChargebacks(ctx, chargebacks);
      ctx.violations.push(...disputeCheck.violations);
      ctx.notes.push(...disputeCheck.notes);
      const { rows: lots } = await sql<{ expired: number; holds: number; active: number }>`
      SELECT (SELECT count(*)::int FROM ledger_entries WHERE user_id LIKE ${`${prefix}-%`} AND reference LIKE 'lot:%:expired%') AS expired,
             (SELECT count(*)::int FROM holds WHERE user_id LIKE ${`${prefix}-%`}) AS holds,
             (SELECT count(*)::int FROM holds WHERE user_id LIKE ${`${prefix}-%`} AND status = 'held' AND expires_at > now()) AS active`.execute(
        cluster.db,
      );
      ctx.notes.push(
        `${purchases.length} token packs and ${refunds.length} refunds through ingest; ${lots[0]?.expired ?? 0} lot expiries by the sweeper; ${
          lots[0]?.holds ?? 0
        } holds, ${lots[0]?.active ?? 0} still active at the end`,
      );
    });
  },
};

export const moneyScenarios: ProfiledScenario[] = [moneyPaths];
