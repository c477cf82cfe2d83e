import { runModelCheck, sizeFromEnv } from './model-check';
import { RealSystem } from './real-system';

/**
 * The model check (docs/model-check.md): `npm run test:model`; MODEL_RUNS and MODEL_STEPS size it,
 * MODEL_SEED replays a run, MODEL_MODE=concurrent sends batches of commands on one user at once.
 * The last line it prints: `model: N sequences, M commands, D divergences (seed S)`.
 */
describe('the money rules, checked against the real system after every operation', () => {
  let system: RealSystem;
  beforeAll(async () => {
    system = await RealSystem.start();
  });
  afterAll(() => system?.stop());

  const size = sizeFromEnv({ runs: 20, steps: 25 });
  it(`${size.mode}: ${size.runs} sequences of at most ${size.steps} commands agree with the model`, async () => {
    const result = await runModelCheck(system, size);
    if (result.report) process.stdout.write(`${result.report}\n`);
    process.stdout.write(
      `model: ${result.sequences} sequences, ${result.commands} commands, ${result.divergences} divergences (seed ${result.seed}, ${size.mode})\n`,
    );
    expect(result.report).toBe('');
  });
});
