import fc from 'fast-check';
import * as C from './commands';
import { emptyWallet } from './money-model';
import { RealSystem, RealUser } from './real-system';

/** `MODEL_RUNS`, `MODEL_STEPS`, `MODEL_SEED`, `MODEL_MODE` (sequential | concurrent), read once. */
export interface ModelCheckSize {
  runs: number;
  steps: number;
  seed: number;
  mode: 'sequential' | 'concurrent';
}

export function sizeFromEnv(defaults: { runs: number; steps: number }, mode: string): ModelCheckSize {
  const int = (name: string, fallback: number) => {
    const raw = process.env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number, not ${raw}`);
    return value;
  };
  if (mode !== 'sequential' && mode !== 'concurrent') throw new Error('MODEL_MODE is sequential or concurrent');
  return {
    runs: int('MODEL_RUNS', defaults.runs),
    steps: int('MODEL_STEPS', defaults.steps),
    seed: int('MODEL_SEED', Math.floor(Math.random() * 2 ** 31)),
    mode,
  };
}

const index = fc.nat({ max: 7 });
const tokens = fc.integer({ min: 1, max: 120 });

/** One user's commands, each as it runs alone. */
function soloCommands() {
  return [
    fc
      .tuple(tokens, fc.option(fc.constantFrom(1, 2, 5, 24, 48, 720), { nil: null }), fc.boolean())
      .map(([amount, expires, admin]) => new C.Grant(amount, expires, admin)),
    fc.constant(null).map(() => new C.PayPack()),
    fc.constantFrom(1, 5, 24, 720).map((h) => new C.PayInvoice(h)),
    fc.tuple(index, fc.constantFrom(100, 250, 499)).map(([p, amount]) => new C.Refund(p, amount)),
    fc.tuple(index, fc.boolean()).map(([p, reinstated]) => new C.Dispute(p, reinstated)),
    tokens.map((amount) => new C.Debit(amount)),
    fc.tuple(tokens, fc.constantFrom(1, 2, 5, 24)).map(([amount, ttl]) => new C.Hold(amount, ttl)),
    fc.tuple(index, fc.option(tokens, { nil: undefined })).map(([h, amount]) => new C.Capture(h, amount)),
    index.map((h) => new C.Release(h)),
    index.map((l) => new C.Void(l)),
    fc.constantFrom(1, 2, 5, 24, 72, 720).map((h) => new C.Advance(h)),
    fc.constant(null).map(() => new C.Sweep()),
  ];
}

/** The api calls that lock the wallet, for batches sent at once. */
function concurrentCommand() {
  return fc.oneof(
    tokens.map((amount) => new C.Debit(amount)),
    fc.tuple(tokens, fc.constantFrom(1, 24)).map(([amount, ttl]) => new C.Hold(amount, ttl)),
    fc.tuple(index, fc.option(tokens, { nil: undefined })).map(([h, amount]) => new C.Capture(h, amount)),
    index.map((h) => new C.Release(h)),
    index.map((l) => new C.Void(l)),
    tokens.map((amount) => new C.Grant(amount, null, false)),
  );
}

const USERS_CONCURRENT = 3;

function commandsFor(mode: ModelCheckSize['mode'], steps: number) {
  if (mode === 'sequential') return fc.commands(soloCommands(), { maxCommands: steps, size: 'max' });
  const onUser = (user: number) =>
    fc.oneof(...soloCommands()).map((command) => Object.assign(command, { user }) as C.MoneyCommand);
  const batch = fc
    .tuple(fc.nat({ max: USERS_CONCURRENT - 1 }), fc.array(concurrentCommand(), { minLength: 2, maxLength: 4 }))
    .map(([user, commands]) => {
      for (const command of commands) command.user = user;
      return Object.assign(new C.Batch(commands), { user }) as C.MoneyCommand;
    });
  return fc.commands(
    [fc.nat({ max: USERS_CONCURRENT - 1 }).chain(onUser), batch, batch],
    { maxCommands: steps, size: 'max' },
  );
}

export function newWorld(system: RealSystem, users: number): C.World {
  const now = Math.floor(Date.now() / 1000) * 1000;
  return {
    system,
    users: Array.from({ length: users }, () => ({ w: emptyWallet(now), real: new RealUser(system), next: 0 })),
    steps: 0,
    executed: [],
  };
}

/** Each sequence ends with `GET /admin/ledger/verify` clean. */
async function verifyClean(world: C.World) {
  const verify = await world.system.verifyLedger();
  if (!verify.ok) throw new C.Divergence(`ledger verify: ${JSON.stringify(verify)}`);
}

/** Runs one sequence of commands against fresh users (what a pasted counterexample calls). */
export async function replaySequence(
  system: RealSystem,
  commands: C.MoneyCommand[],
  users = 1,
): Promise<C.World> {
  const world = newWorld(system, users);
  for (const command of commands) if (command.check(world)) await command.run(world, world);
  await verifyClean(world);
  return world;
}

export interface ModelCheckResult {
  sequences: number;
  commands: number;
  divergences: number;
  seed: number;
  report: string;
}

/**
 * The check: `runs` sequences of at most `steps` commands, each against fresh users, compared
 * after every command. On a divergence, fast-check shrinks the sequence to the shortest that still
 * diverges; the report gives the seed, that sequence and a test to paste.
 */
export async function runModelCheck(system: RealSystem, size: ModelCheckSize): Promise<ModelCheckResult> {
  const users = size.mode === 'sequential' ? 1 : USERS_CONCURRENT;
  let sequences = 0;
  let commands = 0;
  const property = fc.asyncProperty(commandsFor(size.mode, size.steps), async (cmds) => {
    const world = newWorld(system, users);
    sequences += 1;
    try {
      await fc.asyncModelRun(() => ({ model: world, real: world }), cmds);
      await verifyClean(world);
    } finally {
      commands += world.steps;
    }
  });
  const details = await fc.check(property, { numRuns: size.runs, seed: size.seed, endOnFailure: false });
  if (!details.failed) {
    return { sequences, commands, divergences: 0, seed: size.seed, report: '' };
  }
  const shrunk = details.counterexample
    ? [...(details.counterexample[0] as Iterable<{ hasRan: boolean; cmd: C.MoneyCommand }>)]
        .filter((c) => c.hasRan)
        .map((c) => c.cmd)
    : [];
  const rendered = shrunk.map((c) => `    ${c.toString()},`).join('\n');
  const report = [
    `model: divergence (seed ${size.seed}, path ${details.counterexamplePath}, ${details.numShrinks} shrinks)`,
    `shortest sequence (${shrunk.length} commands):`,
    ...shrunk.map((c) => `  ${c.toString()}`),
    '',
    String((details.errorInstance as Error | undefined)?.message ?? details.errorInstance),
    '',
    'as a test (test/model/, beside the check):',
    `it('model counterexample, seed ${size.seed}', async () => {`,
    `  await replaySequence(system, [`,
    rendered,
    `  ]${users > 1 ? `, ${users}` : ''});`,
    '});',
  ].join('\n');
  return { sequences, commands, divergences: 1, seed: size.seed, report };
}
