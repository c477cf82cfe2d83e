// `npm run test:chaos` (CHAOS_PROFILE=short|full, CHAOS_SEED=<n>): Tally's built processes against
// a Postgres and a Redis of their own, faults injected, every invariant checked after each
// scenario. The report goes to test-output/chaos-<seed>.{md,json}.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type AppWebhookStats, checkAppWebhookInvariants } from '../support/app-webhook-invariants';
import { repoRoot } from '../support/built-process';
import { appWebhookScenarios } from './app-webhook-scenarios';
import { idempotencyScenarios } from './idempotency-scenarios';
import { moneyScenarios } from './money-scenarios';
import { partitionScenarios } from './partition-scenarios';
import { poolerScenarios } from './pooler-scenarios';
import { type ProfiledScenario, processFaultScenarios } from './process-fault-scenarios';
import type { Profile, Scenario, ScenarioContext } from './scenario';
import { scenarios } from './scenarios';
import { ChaosCluster, chaosRevenueCatAuth, chaosSecrets, shutdownTimeoutMs } from './support/chaos-cluster';
import { canaryEmail, rawBodyCanary } from './support/events';
import { hostileCanaries, sendHostileBurst } from './support/hostile-burst';
import {
  checkInvariants,
  type LedgerCheckpoint,
  ledgerCheckpoint,
  PlanModel,
  settle,
  settleAndQuiesce,
} from './support/invariants';
import { checkIdempotencyKeys } from './support/keyed-requests';
import { networkFaultsAvailable } from './support/network';
import { chaosSeed, Prng, scenarioStreams } from './support/prng';
import { ProviderSimulator, signaturesSent } from './support/provider-simulator';
import { finishRun, runInfo, type ScenarioResult, toMarkdown, writeReport } from './support/report';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** "deadlock detected" lines in the server log of the cluster's primary (and standby) so far. */
function deadlocksOf(cluster: ChaosCluster): number {
  let count = 0;
  for (const server of [cluster.postgres, cluster.standby]) {
    if (!server || !existsSync(server.logFile)) continue;
    count += readFileSync(server.logFile, 'utf8').split('deadlock detected').length - 1;
  }
  return count;
}
const profile: Profile = process.env.CHAOS_PROFILE === 'full' ? 'full' : 'short';
const seed = chaosSeed();
const only = process.env.CHAOS_SCENARIOS?.split(',').filter(Boolean);
const allScenarios: ProfiledScenario[] = [
  ...scenarios,
  ...processFaultScenarios,
  ...idempotencyScenarios,
  ...appWebhookScenarios,
  ...poolerScenarios,
  ...partitionScenarios,
  ...moneyScenarios,
];
/**
 * The main cluster's processes each in a network namespace of their own (support/network.ts), where
 * the machine allows it (root, iproute2, nftables); CHAOS_NETWORK=0 keeps them on the host's. The
 * partition scenarios need it (they fail, saying why, without it).
 */
const networkCheck = networkFaultsAvailable();
const networked = process.env.CHAOS_NETWORK !== '0' && networkCheck.ok;
/** CHAOS_VIA_PGBOUNCER=1: the whole run through PgBouncer (with a synchronous standby to fail over to). */
const viaPgBouncer = process.env.CHAOS_VIA_PGBOUNCER === '1';
// A scenario limited to some profiles still runs whenever CHAOS_SCENARIOS names it.
const selected = only
  ? allScenarios.filter((scenario) => only.includes(scenario.name))
  : allScenarios.filter((scenario) => !scenario.profiles || scenario.profiles.includes(profile));
const results: ScenarioResult[] = [];

const runName = viaPgBouncer ? `${profile}, via PgBouncer` : profile;
const run = runInfo(repoRoot, seed, profile, viaPgBouncer);
process.stdout.write(
  `[chaos] seed ${seed}, profile ${runName} (reproduce with CHAOS_SEED=${seed}${viaPgBouncer ? ' CHAOS_VIA_PGBOUNCER=1' : ''})\n`,
);

describe(`chaos (seed ${seed}, ${runName})`, () => {
  let mainCluster: ChaosCluster;
  /** Started for the first scenario that needs PgBouncer or a standby the main cluster lacks. */
  let pooledCluster: ChaosCluster | undefined;
  /** Each cluster's ledger as of its last check. */
  const checkpoints = new Map<ChaosCluster, LedgerCheckpoint>();
  /** Each cluster's app webhook figures as of its last check (the report shows each scenario's share). */
  const webhookStats = new Map<ChaosCluster, AppWebhookStats>();
  const root = new Prng(seed);
  const workers = profile === 'full' ? 3 : 2;

  beforeAll(async () => {
    const startedAt = Date.now();
    mainCluster = await ChaosCluster.start({
      ingests: 2,
      workers,
      pooled: viaPgBouncer,
      standby: viaPgBouncer,
      network: networked,
    });
    process.stdout.write(
      `[chaos] cluster started in ${Date.now() - startedAt} ms${
        mainCluster.network
          ? `, each process in a network namespace of its own (10.213.${mainCluster.network.block}.0/24)`
          : `, on the host's network (${networkCheck.ok ? 'CHAOS_NETWORK=0' : networkCheck.reason}): no partition scenarios`
      }\n`,
    );
    checkpoints.set(mainCluster, await ledgerCheckpoint(mainCluster.db));
  }, 120_000);

  afterAll(async () => {
    const finished = finishRun(run);
    const file = writeReport(repoRoot, finished, results);
    process.stdout.write(`\n${toMarkdown(finished, results)}\n[chaos] report: ${file}\n`);
    // When something broke (or with CHAOS_LOGS=1), every process's output (every incarnation)
    // next to the report.
    if (results.some((result) => !result.invariantsHeld) || process.env.CHAOS_LOGS === '1') {
      const dir = file.replace(/\.md$/, '-logs');
      mkdirSync(dir, { recursive: true });
      for (const [label, cluster] of [
        ['main', mainCluster],
        ['pooled', pooledCluster],
      ] as const) {
        for (const child of cluster?.processes() ?? [])
          writeFileSync(path.join(dir, `${label}-${child.name}.log`), child.output);
      }
      process.stdout.write(`[chaos] process logs: ${dir}\n`);
    }
    await mainCluster?.stop();
    await pooledCluster?.stop();
  }, 60_000);

  async function clusterFor(scenario: Scenario): Promise<ChaosCluster> {
    const fits = (cluster: ChaosCluster) =>
      !scenario.needs || (cluster.pgbouncer !== undefined && (scenario.needs === 'pooler' || cluster.standby));
    if (fits(mainCluster)) return mainCluster;
    if (pooledCluster && fits(pooledCluster)) return pooledCluster;
    if (pooledCluster) throw new Error(`${scenario.name} needs a standby and the pooled cluster's was promoted`);
    const startedAt = Date.now();
    pooledCluster = await ChaosCluster.start({ ingests: 2, workers, pooled: true, standby: true });
    process.stdout.write(`[chaos] pooled cluster (PgBouncer, standby) started in ${Date.now() - startedAt} ms\n`);
    checkpoints.set(pooledCluster, await ledgerCheckpoint(pooledCluster.db));
    return pooledCluster;
  }

  for (const scenario of selected) {
    it(`${scenario.name}: nothing lost, nothing doubled, every invariant holds`, async () => {
      const cluster = await clusterFor(scenario);
      const checkpoint = checkpoints.get(cluster) as LedgerCheckpoint;
      const streams = scenarioStreams(root, scenario.name);
      const ctx: ScenarioContext = {
        cluster,
        rng: streams.rng,
        sim: new ProviderSimulator(cluster, streams.simulator),
        profile,
        expected: new Map(),
        expectedParked: new Set(),
        plans: new PlanModel(),
        faults: [],
        notes: [],
        events: [],
        violations: [],
        quietChecks: [],
      };
      const started = Date.now();
      const deadlocksBefore = deadlocksOf(cluster);
      // Crashes are counted per scenario: one that happened earlier is that scenario's violation.
      const crashesBefore = new Map(cluster.processes().map((process) => [process, process.crashes.length]));
      let failure: unknown;
      try {
        await scenario.run(ctx);
      } catch (error) {
        failure = error;
      }
      // Let the system settle, the app's webhook receiver healthy again: the supervisor restarts
      // what died, the relay finds what the faults stranded, the workers finish and deliver.
      await cluster.healReceiver().catch((error) => {
        failure ??= error;
      });
      await cluster.allReady().catch((error) => {
        failure ??= error;
      });
      // Settled; for a scenario that asks for it, quiet too: the workers stopped cleanly, so no loop
      // writes while the checks read (the credit-expiry sweeper expires lots as they come due).
      const quiet = scenario.quiesceBeforeChecks
        ? await settleAndQuiesce(cluster, 90_000)
        : { pending: await settle(cluster.db, 90_000), stops: [], rounds: 1 };
      const pending = quiet.pending;
      for (const quietCheck of ctx.quietChecks) {
        await quietCheck().catch((error) => {
          failure ??= error;
        });
      }
      const check = await checkInvariants({
        db: cluster.db,
        accepted: ctx.sim.accepted(),
        checkpoint,
        expectedBalances: ctx.expected,
        expectedParked: ctx.expectedParked,
        plans: ctx.plans,
      });
      checkpoints.set(cluster, check.checkpoint);
      const webhooks = await checkAppWebhookInvariants(cluster.db, cluster.receiver);
      const keys = await checkIdempotencyKeys(cluster.db, cluster.keyed, cluster.stripe);
      // The checks are done: the workers run again for what comes next.
      const woken = await cluster.wake().then(
        () => undefined,
        (error: unknown) => String(error),
      );
      const before = webhookStats.get(cluster);
      webhookStats.set(cluster, webhooks.stats);
      const appWebhooks = {
        messages: webhooks.stats.messages - (before?.messages ?? 0),
        failed: webhooks.stats.failed - (before?.failed ?? 0),
        acceptedTwice: webhooks.stats.acceptedTwice - (before?.acceptedTwice ?? 0),
        received: webhooks.stats.received - (before?.received ?? 0),
      };
      ctx.notes.push(
        `app webhooks: ${appWebhooks.messages} messages written, ${appWebhooks.received} deliveries received, ${appWebhooks.failed} failed, ${appWebhooks.acceptedTwice} accepted twice (so far in this cluster: ${JSON.stringify(webhooks.stats.byType)})`,
        `Idempotency-Keys so far in this cluster: ${keys.keys}, ${keys.retried} sent more than once`,
      );
      const violations = [...ctx.violations, ...check.violations, ...webhooks.violations, ...keys.violations];
      if (pending.length > 0)
        violations.push({ invariant: 'settles', detail: `still in flight: ${pending.join(', ')}` });
      const unclean = quiet.stops.filter((stop) => stop.exit.code !== 0 || stop.ms > shutdownTimeoutMs);
      if (unclean.length > 0) {
        violations.push({
          invariant: 'workers stop cleanly before the checks',
          detail: unclean.map((stop) => `${stop.name} exit ${JSON.stringify(stop.exit)} in ${stop.ms} ms`).join('; '),
        });
      }
      if (woken) violations.push({ invariant: 'workers start again after the checks', detail: woken });
      const unaccepted = [...ctx.sim.records.values()].filter((record) => !record.accepted);
      if (unaccepted.length > 0) {
        violations.push({
          invariant: 'providers get their 200',
          detail: `${unaccepted.length} events never answered 200 (last answers ${unaccepted[0]?.answers.slice(-5)})`,
        });
      }
      if (failure) violations.push({ invariant: 'scenario ran', detail: String(failure) });
      const crashes = cluster
        .processes()
        .flatMap((process) =>
          process.crashes
            .slice(crashesBefore.get(process) ?? 0)
            .map((exit) => `${process.name} ${JSON.stringify(exit)}`),
        );
      if (crashes.length > 0) violations.push({ invariant: 'no process crashed', detail: crashes.join('; ') });
      ctx.notes.push(
        `answers: ${JSON.stringify(ctx.sim.answerCounts())}`,
        ...(quiet.stops.length > 0
          ? [
              `quiet for the checks: the workers stopped on SIGTERM in ${quiet.stops
                .map((stop) => `${stop.ms} ms`)
                .join(
                  ', ',
                )}${quiet.rounds > 1 ? ` (${quiet.rounds} rounds: something was written after a settle)` : ''}`,
            ]
          : []),
      );
      // Not an invariant (Postgres breaks a deadlock by failing one transaction, which is retried),
      // but each costs deadlock_timeout (1 s) of waiting.
      const deadlocks = deadlocksOf(cluster) - deadlocksBefore;
      if (deadlocks > 0) ctx.notes.push(`Postgres deadlocks during the scenario (its log): ${deadlocks}`);
      const result: ScenarioResult = {
        scenario: scenario.name,
        events: ctx.events.length,
        deliveries: ctx.sim.deliveries,
        accepted: ctx.sim.accepted().length,
        lost: check.lost,
        appliedTwice: check.appliedTwice,
        parked: check.parked,
        appWebhooks,
        faults: [...new Set(ctx.faults)],
        invariantsHeld: violations.length === 0,
        violations,
        durationMs: Date.now() - started,
        notes: ctx.notes,
      };
      results.push(result);
      expect(violations).toEqual([]);
    }, 600_000);
  }

  it('no secret, signature, email or raw body reached any log line of any process, rejection paths included', async () => {
    // Every rejection path first (bad signatures, wrong auth, malformed bodies, wrong keys), each
    // request carrying values of its own; then their answers are logged by the processes.
    const cluster = mainCluster;
    const hostile = await sendHostileBurst(cluster);
    const rejected = Object.values(hostile.answers)
      .flat()
      .filter((status) => status >= 400 && status < 500).length;
    // Each process has written its access line for the last hostile request it got (the api:
    // the malformed studio request; each ingest: its one 415), so their rejection logs are in.
    const logged = () =>
      cluster.api.output.includes('"url":"/v1/users/hostile-user/studio/requests"') &&
      cluster.ingests.every((ingest) => ingest.output.includes('"statusCode":415'));
    const deadline = Date.now() + 10_000;
    while (!logged() && Date.now() < deadline) await sleep(50);
    expect(logged()).toBe(true);
    const output = cluster.allOutput();
    expect(output.length).toBeGreaterThan(0);
    const values = [
      ...chaosSecrets,
      chaosRevenueCatAuth,
      canaryEmail,
      rawBodyCanary,
      'v1=',
      ...Object.values(hostileCanaries),
    ];
    const leaks = values.filter((value) => output.includes(value));
    // Any 64-hex run in the logs that is a signature some request carried.
    const signatures = new Set([...signaturesSent, ...hostile.signatures]);
    const hexRuns = output.match(/[0-9a-f]{64}/g) ?? [];
    const leakedSignatures = [...new Set(hexRuns.filter((hex) => signatures.has(hex)))];
    leaks.push(...leakedSignatures.map((hex) => `signature ${hex}`));
    // Any base64 HMAC-SHA256 (44 characters) in the logs that signed an app webhook delivery.
    const webhookSignatures = new Set(
      cluster.receiver.deliveries.flatMap((delivery) => delivery.signature.split(' ').map((part) => part.slice(3))),
    );
    const base64Runs = output.match(/[A-Za-z0-9+/]{43}=/g) ?? [];
    leaks.push(
      ...[...new Set(base64Runs.filter((run) => webhookSignatures.has(run)))].map(
        (run) => `app webhook signature ${run}`,
      ),
    );
    const violations = leaks.map((leak) => ({ invariant: 'no secrets in logs', detail: `found ${leak}` }));
    const notAnswered = Object.entries(hostile.answers).filter(([, statuses]) =>
      statuses.some((status) => status < 400 || status >= 500),
    );
    for (const [name, statuses] of notAnswered) {
      violations.push({ invariant: 'hostile requests refused', detail: `${name} answered ${statuses}` });
    }
    results.push({
      scenario: 'log-capture',
      events: 0,
      deliveries: Object.values(hostile.answers).flat().length,
      accepted: 0,
      lost: 0,
      appliedTwice: 0,
      parked: 0,
      appWebhooks: { messages: 0, failed: 0, acceptedTwice: 0, received: 0 },
      faults: ['bad signatures, wrong auth, malformed bodies, wrong keys'],
      invariantsHeld: violations.length === 0,
      violations,
      durationMs: 0,
      notes: [
        `${output.split('\n').length} log lines scanned for ${values.length} secrets and canaries, ${signatures.size} signature hexes (${hexRuns.length} 64-hex runs in the logs) and ${webhookSignatures.size} app webhook signatures (${base64Runs.length} 44-character base64 runs)`,
        `${rejected} hostile requests refused: ${JSON.stringify(
          Object.fromEntries(Object.entries(hostile.answers).map(([name, statuses]) => [name, [...new Set(statuses)]])),
        )}`,
      ],
    });
    expect(violations).toEqual([]);
  });
});
