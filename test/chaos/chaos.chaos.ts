// `npm run test:chaos` (CHAOS_PROFILE=short|full, CHAOS_SEED=<n>): Tally's built processes against
// a Postgres and a Redis of their own, faults injected, every invariant checked after each
// scenario. The report goes to test-output/chaos-<seed>.{md,json}.
import { repoRoot } from '../support/built-process';
import { type ProfiledScenario, processFaultScenarios } from './process-fault-scenarios';
import { type Profile, type ScenarioContext, scenarios } from './scenarios';
import { ChaosCluster, chaosSecrets } from './support/chaos-cluster';
import { canaryEmail, rawBodyCanary } from './support/events';
import { checkInvariants, type LedgerCheckpoint, ledgerCheckpoint, PlanModel, settle } from './support/invariants';
import { chaosSeed, Prng, scenarioStreams } from './support/prng';
import { ProviderSimulator } from './support/provider-simulator';
import { type ScenarioResult, toMarkdown, writeReport } from './support/report';

const profile: Profile = process.env.CHAOS_PROFILE === 'full' ? 'full' : 'short';
const seed = chaosSeed();
const only = process.env.CHAOS_SCENARIOS?.split(',').filter(Boolean);
const allScenarios: ProfiledScenario[] = [...scenarios, ...processFaultScenarios];
// A scenario limited to some profiles still runs whenever CHAOS_SCENARIOS names it.
const selected = only
  ? allScenarios.filter((scenario) => only.includes(scenario.name))
  : allScenarios.filter((scenario) => !scenario.profiles || scenario.profiles.includes(profile));
const results: ScenarioResult[] = [];

process.stdout.write(`[chaos] seed ${seed}, profile ${profile} (reproduce with CHAOS_SEED=${seed})\n`);

describe(`chaos (seed ${seed}, ${profile})`, () => {
  let cluster: ChaosCluster;
  let checkpoint: LedgerCheckpoint;
  const root = new Prng(seed);

  beforeAll(async () => {
    cluster = await ChaosCluster.start({ ingests: 2, workers: profile === 'full' ? 3 : 2 });
    checkpoint = await ledgerCheckpoint(cluster.db);
  }, 120_000);

  afterAll(async () => {
    const file = writeReport(repoRoot, seed, profile, results);
    process.stdout.write(`\n${toMarkdown(seed, profile, results)}\n[chaos] report: ${file}\n`);
    await cluster?.stop();
  }, 60_000);

  for (const scenario of selected) {
    it(`${scenario.name}: nothing lost, nothing doubled, every invariant holds`, async () => {
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
      };
      const started = Date.now();
      let failure: unknown;
      try {
        await scenario.run(ctx);
      } catch (error) {
        failure = error;
      }
      // Let the system settle: the supervisor restarts what died, the relay finds what the
      // faults stranded, the workers finish.
      await cluster.allReady().catch((error) => {
        failure ??= error;
      });
      const pending = await settle(cluster.db, 90_000);
      const check = await checkInvariants({
        db: cluster.db,
        accepted: ctx.sim.accepted(),
        checkpoint,
        expectedBalances: ctx.expected,
        expectedParked: ctx.expectedParked,
        plans: ctx.plans,
      });
      checkpoint = check.checkpoint;
      const violations = [...ctx.violations, ...check.violations];
      if (pending.length > 0)
        violations.push({ invariant: 'settles', detail: `still in flight: ${pending.join(', ')}` });
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
        .flatMap((process) => process.crashes.map((exit) => `${process.name} ${JSON.stringify(exit)}`));
      if (crashes.length > 0) violations.push({ invariant: 'no process crashed', detail: crashes.join('; ') });
      ctx.notes.push(`answers: ${JSON.stringify(ctx.sim.answerCounts())}`);
      const result: ScenarioResult = {
        scenario: scenario.name,
        events: ctx.events.length,
        deliveries: ctx.sim.deliveries,
        accepted: ctx.sim.accepted().length,
        lost: check.lost,
        appliedTwice: check.appliedTwice,
        parked: check.parked,
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

  it('no secret, signature, email or raw body reached any log line of any process', () => {
    const output = cluster.allOutput();
    expect(output.length).toBeGreaterThan(0);
    const leaks = [...chaosSecrets, canaryEmail, rawBodyCanary, 'v1='].filter((secret) => output.includes(secret));
    results.push({
      scenario: 'log-capture',
      events: 0,
      deliveries: 0,
      accepted: 0,
      lost: 0,
      appliedTwice: 0,
      parked: 0,
      faults: [],
      invariantsHeld: leaks.length === 0,
      violations: leaks.map((leak) => ({ invariant: 'no secrets in logs', detail: `found ${leak}` })),
      durationMs: 0,
      notes: [`${output.split('\n').length} log lines scanned`],
    });
    expect(leaks).toEqual([]);
  });
});
