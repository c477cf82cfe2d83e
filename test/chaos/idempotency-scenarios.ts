// Retries from the app with Idempotency-Key (docs/idempotency.md) while the api is killed with
// kill -9 mid-request and Postgres restarts: every key produces at most one effect, and every
// answer for a key is the same answer.
import type { Scenario, ScenarioContext } from './scenario';
import { whileRunning } from './scenarios';
import { chaosIdempotencyLockMs } from './support/chaos-cluster';
import { isFinal } from './support/keyed-requests';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const size = (ctx: ScenarioContext, short: number, full: number) => (ctx.profile === 'full' ? full : short);

/** One user action sent with its key until it gets a final answer (below 500, not 409). */
interface KeyedAction {
  kind: 'topup' | 'studio';
  user: string;
  key: string;
  path: string;
  body: unknown;
  atMs: number;
  /** Every status the api gave (0: no answer: the api died or the request timed out). */
  answers: number[];
  /** The final answer's status and body text, and those of the extra retry after it. */
  final?: { status: number; body: string };
  replay?: { status: number; body: string; replayed: boolean };
}

async function post(
  ctx: ScenarioContext,
  action: KeyedAction,
): Promise<{ status: number; body: string; replayed: boolean }> {
  try {
    const response = await ctx.cluster.apiRequest(action.path, {
      method: 'POST',
      body: action.body,
      headers: { 'idempotency-key': action.key },
    });
    return {
      status: response.status,
      body: await response.text(),
      replayed: response.headers.get('idempotent-replayed') === 'true',
    };
  } catch {
    return { status: 0, body: '', replayed: false };
  }
}

/** Retries like the app: the same key, method, path and body, until an answer below 500 (409: later). */
async function untilFinal(ctx: ScenarioContext, action: KeyedAction) {
  // Generous: on a loaded machine each api restart takes seconds.
  const deadline = Date.now() + 120_000 + chaosIdempotencyLockMs;
  for (let attempt = 0; Date.now() < deadline; attempt += 1) {
    const answer = await post(ctx, action);
    action.answers.push(answer.status);
    if (isFinal(answer)) return answer;
    await sleep(Math.min(1_000, 100 * 2 ** Math.min(attempt, 4)));
  }
  return undefined;
}

async function sendWithRetries(ctx: ScenarioContext, action: KeyedAction, replayChance: boolean): Promise<void> {
  const answer = await untilFinal(ctx, action);
  if (answer) action.final = { status: answer.status, body: answer.body };
  // The app retries once more though it had its answer (its own timeout fired just after it):
  // the same answer again, marked replayed.
  if (action.final && replayChance) action.replay = await untilFinal(ctx, action);
}

const idempotentRetries: Scenario = {
  name: 'idempotent-retries',
  async run(ctx) {
    // Top-ups (one user each: a pending top-up and a Stripe PaymentIntent) and free-tier studio
    // requests (four per user), each sent with its own Idempotency-Key and retried with it on no
    // answer, a 5xx or a 409, while the api is kill -9ed every 0.4–1.2 s (mid-request: a dozen are
    // in flight) and Postgres is crashed once. Per key: at most one top-up row and one intent,
    // at most one studio request; every final answer for a key is the same, a retry after it
    // replays it byte for byte.
    const durationMs = size(ctx, 8_000, 30_000);
    const plan = ctx.rng.fork('plan');
    const actions: KeyedAction[] = [];
    for (let n = 0; n < size(ctx, 24, 90); n += 1) {
      const user = `idem-topup-u${n}`;
      actions.push({
        kind: 'topup',
        user,
        key: `topup-${plan.int(0, 2 ** 30)}-${n}`,
        path: `/v1/users/${user}/topups`,
        body: { packId: 'tokens_100' },
        atMs: plan.int(0, durationMs),
        answers: [],
      });
    }
    for (let u = 0; u < size(ctx, 6, 20); u += 1) {
      const user = `idem-studio-u${u}`;
      for (let n = 0; n < 4; n += 1) {
        actions.push({
          kind: 'studio',
          user,
          key: `studio-${plan.int(0, 2 ** 30)}-${u}-${n}`,
          path: `/v1/users/${user}/studio/requests`,
          body: { kind: 'image_edit', input: { fake: 'succeed', delayMs: 0, prompt: `idem ${user} action ${n}` } },
          atMs: plan.int(0, durationMs),
          answers: [],
        });
      }
      ctx.expected.set(user, 0);
    }
    const replays = actions.map(() => plan.chance(0.5));
    const started = Date.now();
    let inFlight = 0;
    const work = Promise.all(
      actions.map(async (action, i) => {
        await sleep(Math.max(0, started + action.atMs - Date.now()));
        inFlight += 1;
        try {
          await sendWithRetries(ctx, action, replays[i] ?? false);
        } finally {
          inFlight -= 1;
        }
      }),
    );
    const kills: number[] = [];
    const answered = () =>
      ctx.cluster.keyed.actions.reduce((sum, action) => sum + action.answers.filter((a) => a.status !== 0).length, 0);
    let crashed = false;
    const faults = await whileRunning(
      work,
      async () => {
        if (!crashed && Date.now() - started > durationMs / 2) {
          crashed = true;
          await ctx.cluster.crashPostgres(ctx.rng.int(1_000, 2_000));
          return;
        }
        // Mid-request: once the new incarnation has answered something (a restart can outlast
        // the pause on a loaded machine), then 0–300 ms later, while others are in flight.
        await ctx.cluster.api.ready();
        const before = answered();
        const deadline = Date.now() + 5_000;
        while (answered() === before && Date.now() < deadline) await sleep(20);
        await sleep(ctx.rng.int(0, 300));
        kills.push(inFlight);
        ctx.cluster.api.kill9();
      },
      () => ctx.rng.int(400, 1_200),
      size(ctx, 6, 30),
    );
    ctx.faults.push(
      `kill -9 of the api mid-request ×${kills.length}`,
      crashed ? 'Postgres crash' : '',
      'keyed retries',
    );
    ctx.faults = ctx.faults.filter(Boolean);

    // Every key: at most one effect and one answer is an invariant after every scenario
    // (checkIdempotencyKeys, over every keyed request the cluster's apiRequest sent); here, only
    // that every action got its final answer.
    const unanswered = actions.filter((action) => !action.final).length;
    const statuses: Record<string, number> = {};
    for (const action of actions) for (const status of action.answers) statuses[status] = (statuses[status] ?? 0) + 1;
    const finals: Record<string, number> = {};
    for (const action of actions)
      finals[action.final?.status ?? 'none'] = (finals[action.final?.status ?? 'none'] ?? 0) + 1;
    ctx.notes.push(
      `${actions.length} keyed actions (${actions.filter((a) => a.kind === 'topup').length} top-ups, ${
        actions.filter((a) => a.kind === 'studio').length
      } studio requests), ${faults} faults; requests in flight at each api kill: ${kills.join(', ')}`,
      `every answer: ${JSON.stringify(statuses)}; final answers: ${JSON.stringify(finals)}; ${
        actions.filter((a) => a.answers.length > 1).length
      } actions needed a retry, ${actions.filter((a) => a.replay).length} retried after their answer`,
    );
    if (unanswered > 0) {
      ctx.violations.push({
        invariant: 'every keyed action gets its answer',
        detail: `${unanswered} actions never got a final answer`,
      });
    }
  },
};

export const idempotencyScenarios: Scenario[] = [idempotentRetries];
