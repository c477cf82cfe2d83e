import type { ChaosCluster } from './support/chaos-cluster';
import type { PlanModel, Violation } from './support/invariants';
import type { Prng } from './support/prng';
import type { ProviderSimulator, SimulatedEvent } from './support/provider-simulator';

// What a chaos scenario is and what it is given. The scenario lists (scenarios.ts,
// provider-scenarios.ts, process-fault-scenarios.ts) import these; nothing here imports them.

export type Profile = 'short' | 'full';

export interface ScenarioContext {
  cluster: ChaosCluster;
  rng: Prng;
  sim: ProviderSimulator;
  profile: Profile;
  /** The model: final balance per user this scenario owns. */
  expected: Map<string, number>;
  /** Inbox events the model expects to park (provider:id). */
  expectedParked: Set<string>;
  /** The model of final plans and installments (subscription scenarios). */
  plans: PlanModel;
  faults: string[];
  notes: string[];
  /** Distinct events the scenario sent (the simulator counts deliveries). */
  events: SimulatedEvent[];
  /** Violations the scenario found itself (besides the invariants checked after it). */
  violations: Violation[];
  /**
   * The scenario's own checks that read the database, run by the harness once everything settled
   * and the workers are stopped (nothing writes meanwhile), before the invariants. They report
   * through `violations` and `notes`.
   */
  quietChecks: (() => Promise<void>)[];
}

export interface Scenario {
  name: string;
  /**
   * What the scenario needs of the cluster: `pooler`, the services behind PgBouncer; `standby`,
   * that and a synchronous standby. It runs on the main cluster when that has it
   * (CHAOS_VIA_PGBOUNCER=1), else on a second cluster that has both, started when first needed.
   */
  needs?: 'pooler' | 'standby';
  /**
   * The workers are stopped cleanly once everything settled, before the checks (`settleAndQuiesce`),
   * and started again after them: for a scenario whose data keeps the workers' loops writing after
   * the settle (lots that come due, holds that lapse: the credit-expiry sweeper), so the checks read
   * a database nothing writes. Others skip it: it costs two worker starts per scenario.
   */
  quiesceBeforeChecks?: boolean;
  run(ctx: ScenarioContext): Promise<void>;
}
