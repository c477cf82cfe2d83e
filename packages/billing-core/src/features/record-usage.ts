import type { BatchItemFailure } from '@tally/platform/db';
import { sql } from 'kysely';
import { triggerAutoTopup } from '../auto-topup/trigger-auto-topup';
import type { Catalog } from '../catalog/catalog';
import { sameMeters } from '../catalog/meter-map';
import { type PricedUsage, priceUsage, type UsageSpec } from '../catalog/price-usage';
import { lockStudioUser } from '../db/lock-studio-user';
import type { FeatureUseRow } from '../db/schema';
import { InsufficientBalanceError, LedgerReferenceConflictError } from '../errors';
import { decideFeatureCharge, type FeatureCharge } from '../feature-uses/decide-feature-charge';
import { featureUseOf, insertFeatureUsesSql, type KeptFeatureUse, keptFeatureUseOf } from '../feature-uses/feature-use';
import { type LockedSpendFunds, lockWalletsForSpend, type SpendFenceSql } from '../holds/lock-wallet-funds';
import { postLedgerEntries } from '../ledger/post-ledger-entries';
import { type LedgerPosting, type PostLedgerEntryResult, postLedgerEntry } from '../ledger/post-ledger-entry';
import { references } from '../references';
import { type SpendLimitDefaults, type SpendLimitRefusal, spendLimitRefusal } from '../spend-limits/spend-limits';
import { runSpendsTogether } from '../unit-of-work/spends-together';
import { inUnitOfWork, type UnitOfWork, type UnitOfWorkDeps } from '../unit-of-work/unit-of-work';

export interface UsageAnswer {
  ledgerReference: string;
  feature: string;
  variant: string | null;
  quantities: Record<string, number>;
  /** Tokens charged: 0 on the free tier. */
  cost: number;
  freeTier: boolean;
  priceVersion: string;
  /** The balance right after the usage (the same on every retry). */
  balance: number;
  available: number;
  draws: { lotId: number; amount: number }[];
}

export type RecordUsageResult =
  | { kind: 'recorded'; answer: UsageAnswer }
  /** The reference recorded the same usage before: nothing charged now, the first answer. */
  | { kind: 'already-recorded'; answer: UsageAnswer }
  /** The reference recorded another usage or user (409 reference_conflict). */
  | { kind: 'conflict'; message: string }
  /** An unknown feature, variant or meter (400 unknown_feature, naming the known ones). */
  | { kind: 'unknown-feature'; message: string; known: string[] }
  | { kind: 'invalid'; message: string }
  /** Short: nothing charged (402 insufficient_balance with cost and available). */
  | { kind: 'insufficient'; cost: number; available: number }
  /** A spend limit refuses the cost (402 spend_limit_reached): nothing recorded. */
  | { kind: 'spend-limit'; refusal: SpendLimitRefusal };

/**
 * Records one use of a catalog feature (docs/features.md, `POST /v1/users/{userId}/usage`): prices
 * it from the catalog (priceUsage), decides the free allowance (decideFeatureCharge), debits the
 * cost from what is available under `usage:{reference}` (a spend in the draw order) and keeps the
 * use with its quantities, prices and the catalog's version, all in one unit of work under the
 * wallet lock. The reference is the fence: the same usage again answers the first answer and
 * charges nothing; another usage or user under it is a conflict (the unique (source, reference)
 * backs it against a twin of another user). Past a spend limit (after the fence) or short of
 * `available` it records nothing.
 */
export async function recordUsage(deps: UsageDeps, request: UsageRequest): Promise<RecordUsageResult> {
  const prepared = prepareUsage(deps.catalog, request);
  return 'result' in prepared ? prepared.result : recordAlone(deps, prepared);
}

export interface UsageRequest {
  userId: string;
  /** The app's reference (the ledger's is `usage:{reference}`). */
  reference: string;
  spec: UsageSpec;
}

type UsageDeps = UnitOfWorkDeps & { catalog: Catalog; spendLimits: SpendLimitDefaults };

/** A usage priced from the catalog, ready to record. */
interface PreparedUsage {
  request: UsageRequest;
  priced: Extract<ReturnType<typeof priceUsage>, { kind: 'priced' }>;
  ledgerReference: string;
}

/** Priced, or answered already (an unknown feature, a bad quantity). */
function prepareUsage(catalog: Catalog, request: UsageRequest): PreparedUsage | { result: RecordUsageResult } {
  const priced = priceUsage(catalog.features, request.spec);
  if (priced.kind === 'unknown') {
    return { result: { kind: 'unknown-feature', message: priced.message, known: priced.known } };
  }
  if (priced.kind === 'invalid') return { result: priced };
  return { request, priced, ledgerReference: references.usage(request.reference) };
}

function conflictOf(usage: PreparedUsage): RecordUsageResult {
  return { kind: 'conflict', message: `reference ${usage.request.reference} already recorded another usage or user` };
}

/** One usage in its own unit of work. */
async function recordAlone(deps: UsageDeps, usage: PreparedUsage): Promise<RecordUsageResult> {
  try {
    return await inUnitOfWork(deps, (uow) => usageInUnit(uow, deps, usage));
  } catch (error) {
    // The spend's own check (an expired lot's tokens count in available but cannot be spent).
    if (error instanceof InsufficientBalanceError) {
      return { kind: 'insufficient', cost: usage.priced.usage.cost, available: error.available };
    }
    if (error instanceof LedgerReferenceConflictError && error.reference === usage.ledgerReference) {
      return conflictOf(usage);
    }
    // A use another user's free usage took the reference of since the fence's read (its unit rolled back).
    // guard: usage-twin-conflict
    if (isUniqueViolation(error, 'feature_uses_reference_uq')) return conflictOf(usage);
    throw error;
  }
}

/** A usage under its user's locks, in the caller's unit: its fence, its decision, its posting and its use. */
async function usageInUnit(uow: UnitOfWork, deps: UsageDeps, usage: PreparedUsage): Promise<RecordUsageResult> {
  const { userId } = usage.request;
  // A use that may take a free slot serialises with the user's studio requests, which count
  // against the same allowances under the studio lock (taken before the wallet's, as they do).
  if (usage.priced.feature.freeAllowance) await lockStudioUser(uow.trx, userId);
  // The wallet locked and read with the use under the reference, as a batch reads them (no statement of its own).
  const [locked] = await lockWalletsForSpend<FeatureUseRow>(uow, [usage.request], usageFence);
  const { funds, previous } = locked as NonNullable<typeof locked>;
  const decision = await decideUsage(uow, deps, usage, funds, previous && keptFeatureUseOf(previous));
  if (decision.kind === 'answer') return decision.result;
  const kept = keptUseOf(deps, usage, funds, decision);
  if (decision.charge.tokens === 0) return (await keepFreeUses(uow, [{ usage, kept }]))[0] as RecordUsageResult;
  const posted = await postLedgerEntry(uow, usagePosting(usage, kept));
  return chargedAnswerOf(uow, { usage, funds, kept, posted });
}

/**
 * Several usages arriving together (the api's usage batcher, platform's createTransactionBatcher),
 * each answered exactly as recordUsage answers it alone, as debitTokensTogether does for debits
 * (runSpendsTogether: each user's first usage in usageManyInUnit, the wallets locked and read with
 * each reference's use in two statements, the charges in one posting statement whose spends draw
 * their lots together, the uses in one insert; its further ones in usageInUnit, one commit). A
 * usage that may take a free slot runs alone (it takes the studio lock before the wallet's).
 */
export async function recordUsagesTogether(
  deps: UsageDeps,
  requests: readonly UsageRequest[],
): Promise<(RecordUsageResult | BatchItemFailure)[]> {
  const results = new Array<RecordUsageResult | BatchItemFailure>(requests.length);
  const priced: { usage: PreparedUsage; index: number }[] = [];
  for (const [index, request] of requests.entries()) {
    const prepared = prepareUsage(deps.catalog, request);
    if ('result' in prepared) results[index] = prepared.result;
    else priced.push({ usage: prepared, index });
  }
  const answers = await runSpendsTogether(
    deps,
    priced.map((item) => item.usage),
    {
      keyOf: (usage) => usage.request,
      alone: (usage) => recordAlone(deps, usage),
      many: (uow, usages) => usageManyInUnit(uow, deps, usages),
      inUnit: (uow, usage) => usageInUnit(uow, deps, usage),
      // guard: usage-free-alone
      runsAlone: (usage) => Boolean(usage.priced.feature.freeAllowance),
    },
  );
  for (const [position, { index }] of priced.entries()) {
    results[index] = answers[position] as RecordUsageResult | BatchItemFailure;
  }
  return results;
}

/** The usages of distinct users and references (no free allowance) in the caller's unit. */
async function usageManyInUnit(
  uow: UnitOfWork,
  deps: UsageDeps,
  usages: readonly PreparedUsage[],
): Promise<RecordUsageResult[]> {
  const locked = await lockWalletsForSpend<FeatureUseRow>(
    uow,
    usages.map((usage) => ({ userId: usage.request.userId, reference: usage.request.reference })),
    usageFence,
  );
  const results = new Array<RecordUsageResult>(usages.length);
  const toKeep: { index: number; funds: LockedSpendFunds; decision: Extract<UsageDecision, { kind: 'record' }> }[] = [];
  for (const [index, usage] of usages.entries()) {
    const { funds, previous } = locked[index] as (typeof locked)[number];
    const decision = await decideUsage(uow, deps, usage, funds, previous && keptFeatureUseOf(previous));
    if (decision.kind === 'answer') results[index] = decision.result;
    else toKeep.push({ index, funds, decision });
  }
  const uses = toKeep.map(({ index, funds, decision }) => {
    const usage = usages[index] as PreparedUsage;
    return { index, usage, funds, kept: keptUseOf(deps, usage, funds, decision) };
  });
  const charged = uses.filter(({ kept }) => kept.use.cost > 0);
  const posted = await postLedgerEntries(
    uow,
    charged.map(({ usage, kept }) => usagePosting(usage, kept)),
    // A throw rolls the whole unit back (runSpendsTogether runs its usages alone then).
    { savepoint: false },
  );
  for (const [position, item] of charged.entries()) {
    results[item.index] = await chargedAnswerOf(uow, { ...item, posted: posted[position] as PostLedgerEntryResult });
  }
  const free = uses.filter(({ kept }) => kept.use.cost === 0);
  const kept = await keepFreeUses(uow, free);
  for (const [position, { index }] of free.entries()) results[index] = kept[position] as RecordUsageResult;
  return results;
}

/** A usage's fence in a batch's read (lockWalletsForSpend): the use under its reference. */
const usageFence: SpendFenceSql = (reference) =>
  sql`SELECT row_to_json(u) FROM feature_uses u WHERE u.source = 'usage' AND u.reference = ${reference}`;

type UsageDecision =
  | { kind: 'answer'; result: RecordUsageResult }
  | { kind: 'record'; charge: FeatureCharge; at: Date };

/**
 * A usage's rules under its wallet lock (one definition for a usage alone and in a batch): the
 * reference's fence (the same usage: its first answer; another: a conflict), the free allowance,
 * then the spend limits and `available` for what it charges.
 */
async function decideUsage(
  uow: UnitOfWork,
  deps: UsageDeps,
  usage: PreparedUsage,
  funds: LockedSpendFunds,
  previous: KeptFeatureUse | undefined,
): Promise<UsageDecision> {
  const { userId } = usage.request;
  const { priced } = usage;
  // guard: usage-reference-fence
  if (previous) {
    return {
      kind: 'answer',
      result: sameUse(previous, userId, priced.usage)
        ? await answerOf(uow, previous, 'already-recorded')
        : conflictOf(usage),
    };
  }
  const at = uow.clock.now();
  const charge = await decideFeatureCharge(uow.trx, { userId, feature: priced.feature, cost: priced.usage.cost, at });
  const refusal = spendLimitRefusal(funds.spend, deps.spendLimits, funds.held, charge.tokens);
  // guard: usage-spend-limit
  if (refusal) return { kind: 'answer', result: { kind: 'spend-limit', refusal } };
  if (funds.available < charge.tokens) {
    return {
      kind: 'answer',
      result: { kind: 'insufficient', cost: charge.tokens, available: Math.max(0, funds.available) },
    };
  }
  return { kind: 'record', charge, at };
}

/** A charged usage's debit, its use written in the same round trip as its draws (LotMovement's `alongside`). */
function usagePosting(usage: PreparedUsage, kept: KeptFeatureUse): LedgerPosting {
  const { use } = kept;
  return {
    userId: usage.request.userId,
    reference: usage.ledgerReference,
    amount: -use.cost,
    reason: 'usage',
    // guard: usage-use-written-with-draws
    lots: { kind: 'spend', alongside: insertFeatureUsesSql([kept]) },
    messageData: { feature: use.feature, variant: use.variant, quantities: use.quantities, cost: use.cost },
  };
}

/**
 * The use a usage keeps, with its answer (decided under the wallet lock, before its debit posts):
 * the balance after its debit is the balance read under the wallet lock less its cost (the posting
 * moves it by exactly that under the same lock; chargedAnswerOf checks it did).
 */
function keptUseOf(
  deps: UsageDeps,
  usage: PreparedUsage,
  funds: LockedSpendFunds,
  decision: Extract<UsageDecision, { kind: 'record' }>,
): KeptFeatureUse {
  const { charge, at } = decision;
  const balance = funds.balance - charge.tokens;
  return {
    source: 'usage',
    userId: usage.request.userId,
    reference: usage.request.reference,
    use: featureUseOf(usage.priced.usage, charge, deps.catalog.version, at),
    ledgerReference: charge.tokens > 0 ? usage.ledgerReference : null,
    answer: { balance, available: balance - funds.held },
  };
}

/**
 * A charged usage's answer once its debit posted (its use written with the debit's draws): the
 * auto top-up trigger, then the answer with the draws the posting recorded. A debit that did not
 * post as the use says throws (the unit rolls back, its use too).
 */
async function chargedAnswerOf(
  uow: UnitOfWork,
  item: { usage: PreparedUsage; funds: LockedSpendFunds; kept: KeptFeatureUse; posted: PostLedgerEntryResult },
): Promise<RecordUsageResult> {
  const { usage, funds, kept, posted } = item;
  if (posted.kind !== 'posted' || Number(posted.entry.balance_after) !== kept.answer.balance) {
    throw new Error(`the debit of usage ${usage.request.reference} did not post as its use says`);
  }
  // guard: usage-triggers-auto-topup
  await triggerAutoTopup(uow, usage.request.userId, funds.autoTopup, funds.available - kept.use.cost);
  return answerOf(
    uow,
    kept,
    'recorded',
    (posted.draws ?? []).map(({ lotId, amount }) => ({ lotId, amount })),
  );
}

/**
 * Free uses (nothing charged: no debit, no draws) kept in ONE insert, each with the answer it
 * gives. A use another user's usage took the reference of since the fence's read throws the
 * conflict (its unit rolls back).
 */
async function keepFreeUses(
  uow: UnitOfWork,
  items: readonly { usage: PreparedUsage; kept: KeptFeatureUse }[],
): Promise<RecordUsageResult[]> {
  if (items.length === 0) return [];
  const inserted = await insertFeatureUsesSql(
    items.map(({ kept }) => kept),
    { onConflict: true },
  ).execute(uow.trx);
  const written = new Set(inserted.rows.map((row) => row.reference));
  const answers: RecordUsageResult[] = [];
  for (const { usage, kept } of items) {
    if (!written.has(kept.reference)) {
      throw new LedgerReferenceConflictError(
        usage.ledgerReference,
        { userId: '?', amount: 0 },
        { userId: usage.request.userId, amount: 0 },
      );
    }
    answers.push(await answerOf(uow, kept, 'recorded', []));
  }
  return answers;
}

/** Whether `error` is Postgres's unique violation of `constraint`. */
function isUniqueViolation(error: unknown, constraint: string): boolean {
  const { code, constraint: violated } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === '23505' && violated === constraint;
}

/** The same usage: the user, feature, variant and quantities of the first (prices may have changed since). */
function sameUse(kept: KeptFeatureUse, userId: string, usage: PricedUsage): boolean {
  const { use } = kept;
  return (
    kept.userId === userId &&
    use.feature === usage.feature &&
    use.variant === usage.variant &&
    sameMeters(use.quantities, usage.quantities)
  );
}

/** A usage's answer from its kept use: the draws of its debit as the caller knows them, or read (none for a free use). */
async function answerOf(
  uow: UnitOfWork,
  kept: KeptFeatureUse,
  kind: 'recorded' | 'already-recorded',
  /** The draws when the caller read them already (a new use's statement does). */
  known?: { lotId: number; amount: number }[],
): Promise<RecordUsageResult> {
  const { use, ledgerReference } = kept;
  const draws =
    known?.map((d) => ({ lotId: Number(d.lotId), amount: Number(d.amount) })) ??
    (ledgerReference === null
      ? []
      : (
          await sql<{ lot_id: number; amount: number }>`
            SELECT d.lot_id, d.amount FROM ledger_draws d JOIN ledger_entries e ON e.id = d.ledger_entry_id
             WHERE e.reference = ${ledgerReference} ORDER BY d.position NULLS LAST, d.lot_id`.execute(uow.trx)
        ).rows.map((d) => ({ lotId: Number(d.lot_id), amount: Number(d.amount) })));
  return {
    kind,
    answer: {
      ledgerReference: references.usage(kept.reference),
      feature: use.feature,
      variant: use.variant,
      quantities: use.quantities,
      cost: use.cost,
      freeTier: use.freeTier,
      priceVersion: use.priceVersion,
      balance: kept.answer.balance,
      available: kept.answer.available,
      draws,
    },
  };
}
