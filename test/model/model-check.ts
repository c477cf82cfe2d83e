import fc from 'fast-check';
import * as C from './commands';
import type * as M from './money-model';
import { emptyWallet } from './money-model';
import { type RealSystem, RealUser } from './real-system';

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
/** Small amounts, and ones near a lot's size (100): a hold of most of a lot is where its expiry meets it. */
const tokens = fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 60, max: 110 }));

/**
 * One user's commands, each as it runs alone. Some appear twice: fast-check picks among the entries
 * evenly, and the holes found so far sat where holds, subscription lots, time and the sweeper meet.
 */
function soloCommands() {
  const invoice = fc.constantFrom(1, 2, 720).map((h) => new C.PayInvoice(h));
  const hold = fc
    .tuple(fc.oneof(tokens, fc.integer({ min: 71, max: 99 })), fc.constantFrom(1, 5, 5, 24))
    .map(([amount, ttl]) => new C.Hold(amount, ttl));
  const release = index.map((h) => new C.Release(h));
  const advance = fc
    .tuple(fc.constantFrom(1, 1, 2, 5, 24, 72, 720), fc.boolean())
    .map(([h, sweep]) => new C.Advance(h, sweep));
  const sweep = fc.constant(null).map(() => new C.Sweep());
  // Payment indices small: most sequences have one or two packs, and a hole needs the same one thrice.
  const refund = fc
    .tuple(fc.nat({ max: 1 }), fc.constantFrom(100, 250, 499))
    .map(([p, amount]) => new C.Refund(p, amount));
  const dispute = fc.tuple(fc.nat({ max: 1 }), fc.boolean()).map(([p, reinstated]) => new C.Dispute(p, reinstated));
  const disputeNext = fc.nat({ max: 1 }).map((p) => new C.DisputeNext(p));
  const nextExpiry = fc.constantFrom(true, true, false).map((sweeps) => new C.AdvanceToNextExpiry(sweeps));
  const grant = fc
    .tuple(tokens, fc.option(fc.constantFrom(1, 2, 5, 24, 48, 720), { nil: null }), fc.boolean(), fc.boolean())
    .map(([amount, expires, admin, settles]) => new C.Grant(amount, expires, admin, settles));
  const pack = fc.constant(null).map(() => new C.PayPack());
  const applePack = fc.constant(null).map(() => new C.PayApplePack());
  const appleRefund = fc.nat({ max: 1 }).map((p) => new C.AppleRefund(p));
  const googlePack = fc.constant(null).map(() => new C.PayGooglePack());
  const googleVoided = fc.nat({ max: 1 }).map((p) => new C.GoogleVoided(p));
  const debit = tokens.map((amount) => new C.Debit(amount));
  const capture = fc.tuple(index, fc.option(tokens, { nil: undefined })).map(([h, amount]) => new C.Capture(h, amount));
  const voidLot = index.map((l) => new C.Void(l));
  const spec = fc.nat({ max: C.SPECS.length - 1 });
  const forgive = fc.option(fc.integer({ min: 1, max: 60 }), { nil: null }).map((amount) => new C.Forgive(amount));
  // Limits near what a sequence spends (a pack is 100): each period set, removed (null) or left (undefined).
  const limit = (values: number[]) =>
    fc.oneof(fc.constantFrom(...values), fc.constant(null), fc.constant(undefined)) as fc.Arbitrary<
      number | null | undefined
    >;
  const setLimits = fc
    .tuple(limit([0, 20, 60, 120, 250]), limit([40, 150, 400]))
    .map(([daily, monthly]) => new C.SetLimits(daily, monthly));
  const usage = spec.map((s) => new C.Usage(s));
  const usageAgain = fc.tuple(index, fc.boolean()).map(([u, same]) => new C.UsageAgain(u, same));
  const pricedHold = fc.tuple(spec, fc.constantFrom(1, 5, 24)).map(([s, ttl]) => new C.PricedHold(s, ttl));
  const pricedCapture = fc
    .tuple(index, fc.constantFrom(0, 5, 10, 15, 30, 100, 100))
    .map(([h, tenths]) => new C.PricedCapture(h, tenths));
  // Auto top-up: thresholds near what a sequence holds (a pack is 100), limits that a sequence reaches.
  const enableAutoTopup = fc
    .tuple(fc.constantFrom(20, 60, 150, 150), fc.constantFrom(1, 1, 2, 5))
    .map(([threshold, limit]) => new C.EnableAutoTopup(threshold, limit));
  const card = fc
    .constantFrom<M.CardBehaviour>('succeeds', 'declines', 'declines', 'requires_authentication')
    .map((behaviour) => new C.CardBehaves(behaviour));
  const chargeAutoTopup = fc.constant(null).map(() => new C.ChargeAutoTopup());
  // [command, weight]: fast-check picks among the entries evenly, so an entry n times is n times as likely.
  const weighted: [fc.Arbitrary<C.MoneyCommand>, number][] = [
    [invoice, 3],
    [hold, 3],
    [nextExpiry, 3],
    [release, 1],
    [advance, 1],
    [sweep, 1],
    [grant, 1],
    [pack, 1],
    [refund, 2],
    [dispute, 1],
    [disputeNext, 2],
    [debit, 1],
    [capture, 1],
    [voidLot, 1],
    [usage, 2],
    [usageAgain, 1],
    [pricedHold, 3],
    [pricedCapture, 3],
    [forgive, 1],
    [setLimits, 2],
    [enableAutoTopup, 3],
    [card, 2],
    [chargeAutoTopup, 5],
    [applePack, 1],
    [appleRefund, 2],
    [googlePack, 1],
    [googleVoided, 2],
  ];
  return weighted.flatMap(([arbitrary, weight]) => Array.from({ length: weight }, () => arbitrary));
}

const debitCommand = tokens.map((amount) => new C.Debit(amount));
const usageCommand = fc.nat({ max: C.SPECS.length - 1 }).map((s) => new C.Usage(s));
const holdCommand = fc.tuple(tokens, fc.constantFrom(1, 24)).map(([amount, ttl]) => new C.Hold(amount, ttl));
const captureCommand = fc
  .tuple(index, fc.option(tokens, { nil: undefined }))
  .map(([h, amount]) => new C.Capture(h, amount));
const pricedHoldCommand = fc
  .tuple(fc.nat({ max: C.SPECS.length - 1 }), fc.constantFrom(1, 24))
  .map(([s, ttl]) => new C.PricedHold(s, ttl));
const pricedCaptureCommand = fc
  .tuple(index, fc.constantFrom(0, 5, 10, 15, 30, 100))
  .map(([h, tenths]) => new C.PricedCapture(h, tenths));

/** The api calls that lock the wallet, for batches sent at once. */
function concurrentCommand() {
  return fc.oneof(
    debitCommand,
    holdCommand,
    captureCommand,
    index.map((h) => new C.Release(h)),
    index.map((l) => new C.Void(l)),
    fc.tuple(tokens, fc.boolean()).map(([amount, settles]) => new C.Grant(amount, null, false, settles)),
    usageCommand,
    fc.tuple(index, fc.boolean()).map(([u, same]) => new C.UsageAgain(u, same)),
    fc.nat({ max: C.SPECS.length - 1 }).map((s) => new C.PricedHold(s, 24)),
    fc.tuple(index, fc.constantFrom(0, 10, 100)).map(([h, tenths]) => new C.PricedCapture(h, tenths)),
    fc.option(fc.integer({ min: 1, max: 60 }), { nil: null }).map((amount) => new C.Forgive(amount)),
  );
}

const USERS_CONCURRENT = 3;

export function commandsFor(mode: ModelCheckSize['mode'], steps: number) {
  if (mode === 'sequential') return fc.commands(soloCommands(), { maxCommands: steps, size: 'max' });
  const onUser = (user: number) =>
    fc.oneof(...soloCommands()).map((command) => Object.assign(command, { user }) as C.MoneyCommand);
  const batch = fc
    .tuple(fc.nat({ max: USERS_CONCURRENT - 1 }), fc.array(concurrentCommand(), { minLength: 2, maxLength: 4 }))
    .map(([user, commands]) => {
      for (const command of commands) command.user = user;
      return Object.assign(new C.Batch(commands), { user }) as C.MoneyCommand;
    });
  // Batches of distinct users at once: the api's batchers share one transaction between spends
  // of distinct users (debitTokensTogether, recordUsagesTogether, holdOperationsTogether), each
  // user's still explained alone. Mostly debits and usages, or mostly holds and captures.
  const togetherOf = (commands: fc.Arbitrary<C.MoneyCommand>) =>
    fc
      .uniqueArray(
        fc.tuple(fc.nat({ max: USERS_CONCURRENT - 1 }), fc.array(commands, { minLength: 1, maxLength: 3 })),
        {
          minLength: 2,
          maxLength: USERS_CONCURRENT,
          selector: ([user]) => user,
        },
      )
      .map(
        (batches) =>
          new C.Together(
            batches.map(([user, commands]) => {
              for (const command of commands) command.user = user;
              return Object.assign(new C.Batch(commands), { user });
            }),
          ) as C.MoneyCommand,
      );
  const together = togetherOf(
    fc.oneof(
      { arbitrary: debitCommand, weight: 3 },
      { arbitrary: usageCommand, weight: 2 },
      { arbitrary: concurrentCommand(), weight: 1 },
    ),
  );
  // Grants among them, so holds have tokens to reserve and captures active holds to find.
  const grantCommand = tokens.map((amount) => new C.Grant(amount, null, false, false));
  // Holds and captures by amount and by estimate share the api's hold batcher (holdOperationsTogether).
  const togetherHolds = togetherOf(
    fc.oneof(
      { arbitrary: holdCommand, weight: 3 },
      { arbitrary: captureCommand, weight: 3 },
      { arbitrary: pricedHoldCommand, weight: 3 },
      { arbitrary: pricedCaptureCommand, weight: 3 },
      { arbitrary: grantCommand, weight: 1 },
      { arbitrary: concurrentCommand(), weight: 1 },
    ),
  );
  return fc.commands(
    [fc.nat({ max: USERS_CONCURRENT - 1 }).chain(onUser), batch, batch, together, togetherHolds, togetherHolds],
    {
      maxCommands: steps,
      size: 'max',
    },
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
export async function replaySequence(system: RealSystem, commands: C.MoneyCommand[], users = 1): Promise<C.World> {
  const world = newWorld(system, users);
  for (const command of commands) if (command.check(world)) await command.run(world, world);
  await verifyClean(world);
  return world;
}

/** MODEL_VERBOSE=1: a line per sequence (shrinking included) on stderr. */
const progress = (line: string) => {
  if (process.env.MODEL_VERBOSE) process.stderr.write(`${line}\n`);
};
const firstLine = (error: unknown) => String(error instanceof Error ? error.message : error).split('\n')[0];

export interface ModelCheckResult {
  sequences: number;
  commands: number;
  divergences: number;
  seed: number;
  report: string;
  /** How many sequences reached each situation a hole was once found in (the model's `seen`). */
  reached: Record<string, number>;
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
  const reached: Record<string, number> = {};
  const property = fc.asyncProperty(commandsFor(size.mode, size.steps), async (cmds) => {
    const world = newWorld(system, users);
    sequences += 1;
    const started = Date.now();
    try {
      await fc.asyncModelRun(() => ({ model: world, real: world }), cmds);
      await verifyClean(world);
      progress(`sequence ${sequences}: ${world.steps} commands in ${Date.now() - started} ms, agreed`);
    } catch (error) {
      progress(`sequence ${sequences}: ${world.steps} commands in ${Date.now() - started} ms, ${firstLine(error)}`);
      throw error;
    } finally {
      commands += world.steps;
      const seen = new Set(world.users.flatMap((user) => Object.keys(user.w.seen)));
      for (const what of seen) reached[what] = (reached[what] ?? 0) + 1;
    }
  });
  const details = await fc.check(property, { numRuns: size.runs, seed: size.seed, endOnFailure: false });
  if (!details.failed) {
    return { sequences, commands, divergences: 0, seed: size.seed, report: '', reached };
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
  return { sequences, commands, divergences: 1, seed: size.seed, report, reached };
}
