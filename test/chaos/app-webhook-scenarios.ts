// The app's webhook endpoint misbehaving (down, slow, hanging past the delivery timeout,
// flapping) while webhooks stream in and workers are killed with kill -9. Judged after the
// scenario, with the receiver healthy again, by the app webhook invariants every scenario gets
// (test/support/app-webhook-invariants.ts): one wallet.* message per ledger entry, delivered or
// failed; first deliveries in per-user order; no message for a change that does not exist.
import { toWebhookId } from '@tally/billing-core';
import type { ReceivedDelivery, ReceiverAnswer } from '../support/fakes/app-webhook-receiver';
import type { Scenario, ScenarioContext } from './scenario';
import { whileRunning } from './scenarios';
import { chaosAppWebhookTimeoutMs } from './support/chaos-cluster';
import { rcPurchase, rcRefund } from './support/events';
import type { SimulatedEvent } from './support/provider-simulator';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const size = (ctx: ScenarioContext, short: number, full: number) => (ctx.profile === 'full' ? full : short);

/** Waits for `check` to return something, up to `timeoutMs`; undefined when it never did. */
async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs: number): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) return undefined;
    await sleep(200);
  }
}

/**
 * Purchases of a few users (many messages each, so per-user order has something to hold), about a
 * third refunded after the purchase (a debit, often crossing the low-balance threshold: a
 * wallet.balance_low after it), paced over the phases.
 */
function purchasesAndRefunds(ctx: ScenarioContext, users: string[], count: number): SimulatedEvent[] {
  const events: SimulatedEvent[] = [];
  const refunds: SimulatedEvent[] = [];
  for (const user of users) ctx.expected.set(user, ctx.expected.get(user) ?? 0);
  for (let n = 0; n < count; n += 1) {
    const user = ctx.rng.pick(users);
    const id = `awh-buy-${n}`;
    events.push(rcPurchase(id, user, `tx-${id}`));
    if (ctx.rng.chance(0.35)) refunds.push(rcRefund(`awh-refund-${n}`, user, `tx-${id}`));
    else ctx.expected.set(user, (ctx.expected.get(user) ?? 0) + 100);
    // A refund goes out a few events after its purchase (it waits for it if it arrives first).
    if (refunds.length > 0 && ctx.rng.chance(0.5)) events.push(refunds.shift() as SimulatedEvent);
  }
  return [...events, ...refunds];
}

const receiverFaults: Scenario = {
  name: 'app-webhook-receiver-faults',
  async run(ctx) {
    // The app's endpoint goes through four phases while webhooks stream in (a quarter per phase)
    // and a ready worker is kill -9ed every 0.8–2 s (never the last one ready): down (not listening: connection refused, connections cut), slow
    // (every answer after 200–800 ms, within the 2 s delivery timeout), hanging (no answer, or a
    // 204 0.5–2 s after the timeout, so the worker gives up and retries; the app may have
    // handled it, so a redelivery under the same webhook-id follows), then flapping (every
    // 150–500 ms one of: down, 503, 500, healthy). Meanwhile one user's first message is refused
    // for good (410 on every attempt) until the schedule is spent: it must end `failed`, be listed
    // as failed by the admin API, and stop holding that user's next message. Each phase lasts
    // 1.2 s (full: 10 s) and until it has hit deliveries (a retry due, 3 slow answers, 2 deliveries
    // cut, a 5xx or a refused retry), at most 10 s more.
    const receiver = ctx.cluster.receiver;
    const answers = ctx.rng.fork('receiver');
    const phaseMs = size(ctx, 1_200, 10_000);
    const doomedUser = 'awh-doomed';
    ctx.expected.set(doomedUser, 200);
    let doomedId: string | undefined;
    let phaseAnswer: (delivery: ReceivedDelivery) => ReceiverAnswer | undefined = () => undefined;
    receiver.answerFor = (delivery) => {
      if (delivery.body.data.userId === doomedUser) {
        doomedId ??= delivery.webhookId;
        if (delivery.webhookId === doomedId) return { kind: 'status', status: 410, body: 'gone for this user' };
      }
      return phaseAnswer(delivery);
    };
    const seenBefore = receiver.deliveries.length;

    // The doomed user's first purchase, committed before anything else of theirs.
    const first = rcPurchase('awh-doomed-1', doomedUser);
    ctx.events.push(first);
    await ctx.sim.deliverAll([first], 1);
    const doomedEntry = await waitFor(
      () =>
        ctx.cluster.db.selectFrom('ledger_entries').select('id').where('user_id', '=', doomedUser).executeTakeFirst(),
      30_000,
    );
    if (!doomedEntry) throw new Error(`${doomedUser}'s first purchase was never credited`);

    const users = Array.from({ length: size(ctx, 8, 12) }, (_, i) => `awh-u${i}`);
    const events = purchasesAndRefunds(ctx, users, size(ctx, 32, 240));
    ctx.events.push(...events);
    // A quarter of the traffic per phase, sent as the phase starts, so every phase has fresh
    // messages to deliver; the doomed user's second purchase with the last quarter.
    const quarter = Math.ceil(events.length / 4);
    const slices = [0, 1, 2, 3].map((i) => events.slice(i * quarter, (i + 1) * quarter));
    const secondDoomed = rcPurchase('awh-doomed-2', doomedUser);
    ctx.events.push(secondDoomed);
    slices[3]?.push(secondDoomed);

    // Each phase lasts phaseMs and until it has hit deliveries (at most 10 s more): on a loaded
    // machine a killed worker takes seconds to come back.
    const served: Record<string, number> = {};
    const serve = (phase: string, answer: ReceiverAnswer): ReceiverAnswer => {
      served[phase] = (served[phase] ?? 0) + 1;
      return answer;
    };
    const phaseTimes: string[] = [];
    const retriedMessages = async () =>
      Number(
        (
          await ctx.cluster.db
            .selectFrom('app_webhook_messages')
            .select(({ fn }) => fn.countAll<number>().as('count'))
            .where('user_id', 'in', users)
            .where('attempts', '>', 1)
            .executeTakeFirst()
        )?.count ?? 0,
      );
    const phase = async (name: string, slice: SimulatedEvent[], hit: () => Promise<boolean> | boolean) => {
      if (name !== 'receiver flapping') ctx.faults.push(name);
      const started = Date.now();
      const sent = ctx.sim.deliverAll(slice, 4, phaseMs);
      await sleep(phaseMs);
      while (!(await hit()) && Date.now() - started < phaseMs + 10_000) await sleep(100);
      await sent;
      phaseTimes.push(`${name} ${((Date.now() - started) / 1000).toFixed(1)} s`);
    };
    const cut = () => receiver.deliveries.filter((delivery) => delivery.closedBeforeAnswer).length;

    const phases = (async () => {
      // Down until some message was refused (its retry is due).
      const retriedBefore = await retriedMessages();
      await receiver.down();
      await phase(
        'receiver down',
        slices[0] ?? [],
        async () => (await retriedMessages().catch(() => 0)) > retriedBefore,
      );
      await receiver.up();

      phaseAnswer = () => serve('slow', { kind: 'status', status: 204, delayMs: answers.int(200, 800) });
      await phase(
        `receiver slow (200–800 ms, timeout ${chaosAppWebhookTimeoutMs} ms)`,
        slices[1] ?? [],
        () => (served.slow ?? 0) >= 3,
      );

      // No answer, or a 204 well after the timeout (the app may have handled it: a redelivery
      // under the same webhook-id follows).
      const cutBefore = cut();
      phaseAnswer = () =>
        serve(
          'hanging',
          answers.chance(0.5)
            ? { kind: 'hang' }
            : { kind: 'status', status: 204, delayMs: chaosAppWebhookTimeoutMs + answers.int(500, 2_000) },
        );
      await phase('receiver hanging past the timeout', slices[2] ?? [], () => cut() - cutBefore >= 2);
      // The app restarts: hung connections cut, answers after the timeout never written.
      receiver.dropConnections();

      // Every 150–500 ms one of: down, 503, 500, healthy.
      let flaps = 0;
      let flapping = true;
      const flapper = (async () => {
        while (flapping) {
          const state = answers.pick(['down', '503', '500', 'healthy'] as const);
          if (state === 'down') await receiver.down();
          else {
            await receiver.up();
            phaseAnswer =
              state === 'healthy'
                ? () => undefined
                : () => serve('flapping', { kind: 'status', status: Number(state), body: 'flap' });
          }
          flaps += 1;
          await sleep(answers.int(150, 500));
        }
      })();
      const retriedBeforeFlapping = await retriedMessages();
      await phase(
        'receiver flapping',
        slices[3] ?? [],
        async () =>
          flaps >= 4 &&
          ((served.flapping ?? 0) >= 1 || (await retriedMessages().catch(() => 0)) > retriedBeforeFlapping),
      );
      flapping = false;
      await flapper;
      ctx.faults.push(`receiver flapping ×${flaps} (down, 503, 500, healthy)`);
      await receiver.up();
      phaseAnswer = () => undefined;
    })();

    // A ready worker is killed, never the last one ready: on a loaded machine a restart takes
    // seconds, and with every worker down nothing would be delivered for the receiver to mistreat.
    let kills = 0;
    await whileRunning(
      phases,
      async () => {
        const ready = ctx.cluster.workers.filter((worker) => worker.isReady);
        if (ready.length < 2) return;
        ctx.rng.pick(ready).kill9();
        kills += 1;
      },
      () => ctx.rng.int(800, 2_000),
    );
    ctx.faults.push(`kill -9 of a worker ×${kills}`);

    // The doomed message ends failed once its schedule is spent, and the admin API lists it so.
    const failed = await waitFor(async () => {
      const row = await ctx.cluster.db
        .selectFrom('app_webhook_messages')
        .select(['message_id', 'status', 'attempts', 'last_status_code'])
        .where('ledger_entry_id', '=', doomedEntry.id)
        .executeTakeFirst();
      return row?.status === 'failed' ? row : undefined;
    }, 60_000);
    if (!failed) {
      ctx.violations.push({
        invariant: 'a refused message ends failed',
        detail: `${doomedUser}'s first message never failed`,
      });
    } else {
      const listed = (await (
        await ctx.cluster.apiRequest(`/admin/app-webhooks/messages?userId=${doomedUser}&status=failed`)
      ).json()) as { messages: { id: string; status: string; lastStatusCode: number | null }[] };
      const id = toWebhookId(failed.message_id);
      if (!listed.messages.some((message) => message.id === id && message.lastStatusCode === 410)) {
        ctx.violations.push({
          invariant: 'a failed message is listed as failed',
          detail: `${id} is failed; the admin API lists ${JSON.stringify(listed.messages).slice(0, 200)}`,
        });
      }
      ctx.notes.push(
        `${doomedUser}'s first message failed after ${failed.attempts} attempts (last ${failed.last_status_code})`,
      );
    }

    // The faults must have hit deliveries, or the scenario proved nothing.
    const seen = receiver.deliveries.slice(seenBefore);
    const outcome = (delivery: ReceivedDelivery) =>
      delivery.answeredWith !== undefined
        ? String(delivery.answeredWith)
        : delivery.closedBeforeAnswer
          ? 'cut or timed out'
          : 'no answer';
    const counts: Record<string, number> = {};
    for (const delivery of seen) counts[outcome(delivery)] = (counts[outcome(delivery)] ?? 0) + 1;
    const retried = await retriedMessages();
    // From each message's commit to its first arrival at the receiver.
    const written = await ctx.cluster.db
      .selectFrom('app_webhook_messages')
      .select(['message_id', 'created_at'])
      .where('user_id', 'in', users)
      .execute();
    const firstArrival = new Map<string, number>();
    for (const delivery of seen)
      if (!firstArrival.has(delivery.webhookId)) firstArrival.set(delivery.webhookId, delivery.at);
    const latencies = written
      .map((row) => (firstArrival.get(toWebhookId(row.message_id)) ?? Number.NaN) - row.created_at.getTime())
      .filter((ms) => !Number.isNaN(ms))
      .sort((a, b) => a - b);
    ctx.notes.push(
      `from commit to first arrival: p50 ${latencies[Math.floor(latencies.length / 2)]} ms, max ${latencies.at(-1)} ms (${latencies.length} messages)`,
    );
    ctx.notes.push(
      `phases: ${phaseTimes.join(', ')}; answers served by phase: ${JSON.stringify(served)}`,
      `receiver answers during the scenario: ${JSON.stringify(counts)}; ${retried} messages (besides the refused one) needed more than one attempt`,
    );
    if (retried === 0 || !(counts['cut or timed out'] ?? 0)) {
      ctx.violations.push({
        invariant: 'the receiver faults hit deliveries',
        detail: `no message needed a retry or no delivery timed out: ${JSON.stringify(counts)}`,
      });
    }
  },
};

export const appWebhookScenarios: Scenario[] = [receiverFaults];
