import { sql } from 'kysely';
import type { ChaosCluster } from './chaos-cluster';
import type { Violation } from './invariants';
import type { Prng } from './prng';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** AI_STUDIO_TIMEOUT_MS of the chaos workers (chaos-cluster.ts). */
export const chaosAiTimeoutMs = 2_000;

/**
 * What the fake AI service does with one generation: answer 200 at once (`succeed`), 500
 * (`fail`), never (`hang`), 200 well within the client timeout (`slow`: 100–1 200 ms) or 200 well
 * after it (`late`: 2 800–3 500 ms, so the worker has given up).
 */
export type StudioBehaviour = 'succeed' | 'fail' | 'hang' | 'slow' | 'late';
export const studioBehaviours: readonly StudioBehaviour[] = ['succeed', 'fail', 'hang', 'slow', 'late'];
/** Behaviours whose only possible end is failed (and refunded when charged). */
const mustFail = new Set<StudioBehaviour>(['fail', 'hang', 'late']);

export interface PlannedStudioRequest {
  user: string;
  behaviour: StudioBehaviour;
  delayMs: number;
  /** Unique per request: finds the row when the API's answer did not arrive. */
  prompt: string;
  /** When to send it, from the start of the scenario's traffic (0 = as soon as possible). */
  atMs: number;
}

export function planStudioRequest(
  rng: Prng,
  user: string,
  prompt: string,
  atMs = 0,
  behaviours: readonly StudioBehaviour[] = studioBehaviours,
): PlannedStudioRequest {
  const behaviour = rng.pick(behaviours);
  const delayMs = behaviour === 'slow' ? rng.int(100, 1_200) : behaviour === 'late' ? rng.int(2_800, 3_500) : 0;
  return { user, behaviour, delayMs, prompt, atMs };
}

interface SentStudioRequest extends PlannedStudioRequest {
  /** The API's answer (0: none arrived). */
  status: number;
  id?: string;
  tokensCharged: number;
}

/**
 * The AI Studio side of a scenario's model, built from what was sent and what the fake AI service
 * did, never from the final rows: each request's planned behaviour, the API's answer (202 with its
 * price, or 402), and the fake's record of every call (answered 200 on an open connection, 500,
 * nothing, or cut). Faults that could land between an AI answer and the worker's commit run
 * through `aroundFault`, so every answer the fake delivered is settled before the fault and
 * every call in flight at the fault is cut: the outcome of each request follows from the record.
 */
export class StudioModel {
  readonly sent: SentStudioRequest[] = [];
  private readonly users = new Set<string>();

  constructor(private readonly cluster: ChaosCluster) {}

  /** POSTs one planned request as the app would, and records the answer. */
  async send(planned: PlannedStudioRequest): Promise<void> {
    this.users.add(planned.user);
    const input = {
      fake: planned.behaviour === 'late' ? 'slow' : planned.behaviour,
      delayMs: planned.delayMs,
      prompt: planned.prompt,
    };
    let status = 0;
    let body: { id?: string; tokensCharged?: number } = {};
    try {
      // With a key of its own, as the app sends it (never retried here: a missing answer is
      // looked up by prompt); the keyed-request invariant judges every key after the scenario.
      const response = await this.cluster.apiRequest(`/v1/users/${planned.user}/studio/requests`, {
        method: 'POST',
        body: { kind: 'image_edit', input },
        headers: { 'idempotency-key': `model-${planned.prompt}` },
      });
      status = response.status;
      body = (await response.json().catch(() => ({}))) as typeof body;
    } catch {
      status = 0;
    }
    this.sent.push({
      ...planned,
      status,
      ...(status === 202 && body.id ? { id: body.id } : {}),
      tokensCharged: status === 202 ? Number(body.tokensCharged ?? 0) : 0,
    });
  }

  /** Sends every planned request at its `atMs` (one user's requests one after another). */
  async sendAll(planned: PlannedStudioRequest[], started = Date.now()): Promise<void> {
    const byUser = new Map<string, PlannedStudioRequest[]>();
    for (const request of planned) byUser.set(request.user, [...(byUser.get(request.user) ?? []), request]);
    await Promise.all(
      [...byUser.values()].map(async (requests) => {
        for (const request of requests) {
          const due = started + request.atMs;
          if (due > Date.now()) await sleep(due - Date.now());
          await this.send(request);
        }
      }),
    );
  }

  /**
   * Runs `fault` between AI answers: the fake holds its answers, every answer it already delivered
   * is settled (its row left `processing`), the fault runs, every connection to the fake (calls
   * in flight, held answers) is cut, and the fake answers again. Without this, a worker killed (or
   * a database crashed) a millisecond after a 200 arrived would leave a request that the fake
   * answered and the sweeper fails, and no record could say which way it went.
   */
  async aroundFault(fault: () => Promise<void>): Promise<void> {
    const ai = this.cluster.ai;
    ai.hold();
    try {
      await this.waitUntilDeliveredSettle(15_000);
      await fault();
    } finally {
      ai.dropConnections();
      ai.release();
    }
  }

  /** Public ids of requests the fake answered 200 on an open connection. */
  private delivered200(): Set<string> {
    return new Set(this.cluster.ai.calls.filter((call) => call.answeredWith === 200).map((call) => call.requestId));
  }

  private async waitUntilDeliveredSettle(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ids = [...this.delivered200()];
      if (ids.length === 0) return;
      const open = await sql<{ count: number }>`
        SELECT count(*)::int AS count FROM studio_requests
         WHERE public_id::text = ANY(${ids}::text[]) AND status IN ('received', 'processing')`
        .execute(this.cluster.db)
        .then(({ rows }) => rows[0]?.count ?? 0)
        .catch(() => 0);
      if (open === 0 || Date.now() > deadline) return;
      await sleep(25);
    }
  }

  /** Waits until none of the model's users has a request in flight. */
  async waitForSettled(timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const open = await this.cluster.db
        .selectFrom('studio_requests')
        .select('id')
        .where('user_id', 'in', [...this.users, '-'])
        .where('status', 'in', ['received', 'processing'])
        .execute()
        .catch(() => [{ id: 0 }]);
      if (open.length === 0) return;
      if (Date.now() > deadline) throw new Error(`${open.length} studio requests never settled`);
      await sleep(250);
    }
  }

  /**
   * Compares every request's row and ledger rows with the model: a `fail`, `hang` or `late`
   * request ends failed; a `succeed` or `slow` one ends completed exactly when the fake answered
   * it 200 on an open connection, else failed; a charged failed request has one refund equal to
   * its debit; a 402 or any answer but 202 left no row. Returns the tokens the model says each
   * user spent (the price of each completed charged request), the violations and a summary.
   */
  async check(): Promise<{ spent: Map<string, number>; violations: Violation[]; notes: string[] }> {
    const violations: Violation[] = [];
    const fail = (invariant: string, detail: string) => violations.push({ invariant, detail });
    const users = [...this.users];
    const rows =
      users.length === 0
        ? []
        : (
            await sql<{
              public_id: string;
              user_id: string;
              prompt: string | null;
              status: string;
              tokens_charged: number;
              error_code: string | null;
              debits: number;
              refunds: number;
              debit: string | null;
              refund: string | null;
            }>`
              SELECT s.public_id::text, s.user_id, s.input->>'prompt' AS prompt, s.status, s.tokens_charged,
                     s.error_code,
                     (SELECT count(*)::int FROM ledger_entries WHERE reference = 'studio:' || s.public_id || ':debit') AS debits,
                     (SELECT count(*)::int FROM ledger_entries WHERE reference = 'studio:' || s.public_id || ':refund') AS refunds,
                     (SELECT sum(amount)::text FROM ledger_entries WHERE reference = 'studio:' || s.public_id || ':debit') AS debit,
                     (SELECT sum(amount)::text FROM ledger_entries WHERE reference = 'studio:' || s.public_id || ':refund') AS refund
                FROM studio_requests s WHERE s.user_id = ANY(${users}::text[])`.execute(this.cluster.db)
          ).rows;
    const byPrompt = new Map(rows.map((row) => [row.prompt, row]));
    const calls = this.cluster.ai.calls;
    const spent = new Map(users.map((user) => [user, 0]));
    const outcomes: Record<string, number> = {};
    const count = (key: string) => {
      outcomes[key] = (outcomes[key] ?? 0) + 1;
    };
    for (const request of this.sent) {
      const row = byPrompt.get(request.prompt);
      const label = `${request.user} ${request.prompt} (${request.behaviour})`;
      if (request.status !== 202 && request.status !== 0) {
        count(`answered ${request.status}`);
        if (row)
          fail('studio = model', `${label}: answered ${request.status}, yet a request row exists (${row.status})`);
        continue;
      }
      if (!row) {
        count('no answer, no row');
        if (request.status === 202) fail('studio = model', `${label}: answered 202 ${request.id}, no row`);
        continue;
      }
      const charged = request.status === 202 ? request.tokensCharged : row.tokens_charged;
      if (request.status === 202 && row.tokens_charged !== request.tokensCharged) {
        fail('studio = model', `${label}: answered tokensCharged ${request.tokensCharged}, row ${row.tokens_charged}`);
      }
      const ofRequest = calls.filter((call) => call.requestId === row.public_id);
      const answered = ofRequest.filter((call) => call.answeredWith !== undefined);
      const delivered200 = answered.some((call) => call.answeredWith === 200);
      if (answered.length > 1) fail('studio = model', `${label}: the AI service answered ${answered.length} calls`);
      const wanted = mustFail.has(request.behaviour) ? 'failed' : delivered200 ? 'completed' : 'failed';
      const fake =
        ofRequest.length === 0
          ? 'never called'
          : delivered200
            ? 'answered 200'
            : answered.length > 0
              ? `answered ${answered[0]?.answeredWith}`
              : ofRequest.some((call) => call.closedBeforeAnswer)
                ? 'cut or abandoned'
                : 'no answer';
      count(`${request.behaviour}: ${fake} → ${row.status}${row.error_code ? ` (${row.error_code})` : ''}`);
      if (row.status !== wanted) {
        fail('studio = model', `${label}: ${row.status} (${row.error_code}), model ${wanted} (the fake: ${fake})`);
      }
      if (row.status === 'completed' && !delivered200) {
        fail('studio completed ⇒ the fake answered 200', `${label}: completed, the fake: ${fake}`);
      }
      const wantedDebits = charged > 0 ? 1 : 0;
      const wantedRefunds = wanted === 'failed' && charged > 0 ? 1 : 0;
      if (row.debits !== wantedDebits || row.refunds !== wantedRefunds) {
        fail(
          'studio failed ⇒ refunded once',
          `${label}: ${row.debits} debit(s) ${row.debit}, ${row.refunds} refund(s) ${row.refund}; model ${wantedDebits} and ${wantedRefunds}`,
        );
      }
      if (wanted === 'completed') spent.set(request.user, (spent.get(request.user) ?? 0) + charged);
    }
    const notes = [
      `${this.sent.length} studio requests sent: ${JSON.stringify(
        Object.fromEntries(Object.entries(outcomes).sort(([a], [b]) => a.localeCompare(b))),
      )}`,
    ];
    return { spent, violations, notes };
  }
}
