/**
 * A small seeded PRNG (mulberry32). Every random choice of a chaos run (events, their order, which
 * ingest gets a delivery, which process a fault hits and when) comes from one of these. What a
 * scenario plans before it starts (its events, and for `random-schedule` and `ai-dies-mid-saga`
 * every fault with its pause) is reproducible from the seed. Draws made while the scenario runs
 * are reproducible only in sequence: how many retries a delivery needs, or how many kills fit
 * into a stream, depends on timing, which a loaded machine changes from run to run. So draws
 * whose count depends on timing (the simulator's) come from a stream of their own
 * (`scenarioStreams`), and never shift the scenario's.
 */
export class Prng {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  /** A shuffled copy (Fisher-Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i -= 1) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  }

  /** An independent stream for one scenario, so adding a scenario does not change the others. */
  fork(label: string): Prng {
    let hash = this.seed >>> 0;
    for (const char of label) hash = Math.imul(hash ^ char.charCodeAt(0), 2_654_435_761) >>> 0;
    return new Prng(hash);
  }
}

/**
 * One scenario's streams: `rng` for the scenario's own choices, `simulator` for the provider
 * simulator (which ingest instance gets each delivery attempt: one draw per attempt, so as many
 * draws as retries, a number that depends on timing).
 */
export function scenarioStreams(root: Prng, scenario: string): { rng: Prng; simulator: Prng } {
  const rng = root.fork(scenario);
  return { rng, simulator: rng.fork('simulator') };
}

/** The run's seed: CHAOS_SEED when set, else a fresh one (printed by the runner). */
export function chaosSeed(): number {
  const fromEnv = process.env.CHAOS_SEED;
  if (fromEnv !== undefined && fromEnv !== '') {
    const seed = Number(fromEnv);
    if (!Number.isInteger(seed) || seed < 0)
      throw new Error(`CHAOS_SEED must be a non-negative integer, got ${fromEnv}`);
    return seed;
  }
  return Math.floor(Math.random() * 2 ** 31);
}
