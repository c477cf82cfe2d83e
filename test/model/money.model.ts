import { type ModelCheckResult, runModelCheck, sizeFromEnv } from './model-check';
import { RealSystem } from './real-system';

/**
 * The model check (docs/model-check.md): `npm run test:model`. MODEL_RUNS and MODEL_STEPS size it,
 * MODEL_SEED replays a run, MODEL_MODE (sequential | concurrent) runs one mode (default both: the
 * concurrent mode sends batches of 2 to 4 commands on one user at once, for a few users). The
 * last line it prints: `model: N sequences, M commands, D divergences (seed S)`.
 */
describe('the money rules, checked against the real system after every operation', () => {
  let system: RealSystem;
  const results: ModelCheckResult[] = [];
  beforeAll(async () => {
    system = await RealSystem.start();
  });
  afterAll(async () => {
    await system?.stop();
    const total = (f: (r: ModelCheckResult) => number) => results.reduce((sum, r) => sum + f(r), 0);
    const seeds = [...new Set(results.map((r) => r.seed))].join(', ');
    process.stdout.write(
      `model: ${total((r) => r.sequences)} sequences, ${total((r) => r.commands)} commands, ${total((r) => r.divergences)} divergences (seed ${seeds})\n`,
    );
  });

  const modes = process.env.MODEL_MODE ? [process.env.MODEL_MODE] : ['sequential', 'concurrent'];
  for (const mode of modes) {
    // The CI size (both modes within two minutes on a 2-core machine, docs/model-check.md).
    const size = sizeFromEnv(mode === 'sequential' ? { runs: 50, steps: 50 } : { runs: 15, steps: 30 }, mode);
    it(`${mode}: ${size.runs} sequences of at most ${size.steps} commands agree with the model`, async () => {
      const result = await runModelCheck(system, size);
      results.push(result);
      if (result.report) process.stdout.write(`${result.report}\n`);
      const reached = Object.entries(result.reached).map(([what, n]) => `${what}: ${n}`);
      process.stdout.write(`${mode}: sequences that reached ${reached.join('; ') || 'none of the situations'}\n`);
      process.stdout.write(
        `${mode}: ${result.sequences} sequences, ${result.commands} commands, ${result.divergences} divergences (seed ${result.seed})\n`,
      );
      expect(result.report).toBe('');
    });
  }
});
