/**
 * A pure model of one user's money, written from the contract (the product spec's "Credits that
 * expire (lots)", "Spending from the app", "Refunds and chargebacks" and "What a void means, what
 * a rollover keeps"; docs/lots.md and docs/holds.md for what those pages pin down further). It
 * shares no code with the implementation: no import from billing-core, no SQL.
 *
 * Time: instants are milliseconds in the model's frame. The system under test sees the same
 * instants moved back by `shift` (the test moves time by moving every stored time back, see
 * docs/model-check.md), which matters for one thing only: "a month later" is a calendar month in
 * the frame the database computes it in.
 */

import { costOf, featureOf } from './model-catalog';

export type Category = 'promotional' | 'subscription' | 'purchased';

export interface ModelLot {
  key: number;
  category: Category;
  /** Where the lot came from, in the model's own words (mapped to the real `source` by the driver). */
  origin: Origin;
  amount: number;
  remaining: number;
  expiresAt: number | null;
  rolloverMax: number;
  rolledOver: number;
  /** The key of the lot this one rolled over into. */
  rolloverKey: number | null;
  voided: boolean;
}

export type Origin =
  | { kind: 'grant'; reference: string }
  | { kind: 'admin-grant'; reference: string }
  | { kind: 'payment'; payment: number }
  | { kind: 'invoice'; invoice: number }
  | { kind: 'rollover'; of: number }
  | { kind: 'give-back'; payment: number };

export interface Draw {
  lot: number;
  amount: number;
}

export interface ModelHold {
  key: number;
  reference: string;
  amount: number;
  expiresAt: number;
  status: 'held' | 'captured' | 'released';
  /** A lapsed hold whose end has been applied (its freed tokens settled). */
  settled: boolean;
  lots: Draw[];
  /** Ledger entries of the user when it was placed (the shortfall rule's marker). */
  marker: number;
  captured: number;
  /** A hold by estimate: the key of its use (`uses`); captured by quantities at its prices. */
  use: number | null;
  /** A priced capture's answer, kept: a second capture answers it again. */
  pricedAnswer: Record<string, unknown> | null;
}

export interface ModelPayment {
  key: number;
  /** A pack bought through the App Store (docs/stores-apple.md): refunded whole by Apple, never disputed. */
  store?: Store;
  lot: number;
  granted: number;
  amountMinor: number;
  amountRefundedMinor: number;
  tokensRefunded: number;
  refundShortfall: number;
  dispute: ModelDispute | null;
}

export interface ModelDispute {
  owed: number;
  taken: number;
  shortfall: number;
  reinstated: boolean;
  tokensReinstated: number;
  /** A refund came after the withdrawal (the order of the hole "a dispute won then refunded"). */
  refundedSince: boolean;
  /** What the withdrawal's entry drew, in the order drawn (the payment's own lot first). */
  draws: Draw[];
}

export interface ModelShortfall {
  /** The payment a take-back of it recorded it for; null for a priced capture's. */
  payment: number | null;
  kind: 'refund' | 'dispute' | 'priced';
  open: number;
  /** Ledger entries of the user right after the take-back that recorded it. */
  marker: number;
  createdAt: number;
}

export interface ModelGrant {
  reference: string;
  admin: boolean;
  amount: number;
  expiresAt: number | null;
  settlesDebt: boolean;
  lot: number;
  balanceAfter: number;
  debtSettled: number;
}

export interface ModelDebit {
  reference: string;
  amount: number;
  balanceAfter: number;
  draws: Draw[];
}

/**
 * A use of a feature (a usage, or a hold by estimate): what it cost, whether the free allowance
 * covered it, and the UTC day it fell in as the system sees it (see `systemDay`).
 */
export interface ModelUse {
  key: number;
  /** The usage's reference; null for a hold's use. */
  reference: string | null;
  spec: UseSpec;
  cost: number;
  freeTier: boolean;
  /** The model instant it was made (its day is read through the shift, like every stored time). */
  at: number;
  /** A released or lapsed hold gives its use back: it no longer counts against the allowance. */
  givenBack: boolean;
  /** A usage's first answer (a retry answers it again). */
  answer: Record<string, unknown> | null;
}

/** A feature, its variant (or null) and the quantity of each meter. */
export interface UseSpec {
  feature: string;
  variant: string | null;
  quantities: Record<string, number>;
}

export interface ModelWallet {
  now: number;
  /** How far the system's frame is behind the model's (the total of every advance). */
  shift: number;
  lots: ModelLot[];
  holds: ModelHold[];
  payments: ModelPayment[];
  invoices: number;
  shortfalls: ModelShortfall[];
  grants: ModelGrant[];
  debits: ModelDebit[];
  uses: ModelUse[];
  /** The user's own spend limits (docs/spend-limits.md); null: none (the model's stack sets no default). */
  limits: { daily: number | null; monthly: number | null };
  /** Every spend counted against the limits (debits, usage, captures, a priced capture's excess): when, how much. */
  spends: { at: number; amount: number }[];
  entries: number;
  /** Auto top-up (docs/auto-topup.md): the settings and the saved card's behaviour; null until enabled once. */
  autoTopup: ModelAutoTopup | null;
  /** Auto top-up attempts, in the order the spends wrote them. */
  attempts: ModelAttempt[];
  /** How often the sequence reached each situation where a hole was once found (the run's coverage). */
  seen: Record<string, number>;
}

/** The stores Tally reads directly (docs/stores.md). */
export type Store = 'apple' | 'google_play';

export type CardBehaviour = 'succeeds' | 'declines' | 'requires_authentication';

export interface ModelAutoTopup {
  threshold: number;
  monthlyLimit: number;
  enabled: boolean;
  failuresInARow: number;
  disabledReason: 'failures' | null;
  card: CardBehaviour;
}

export interface ModelAttempt {
  status: 'pending' | 'succeeded' | 'failed' | 'canceled';
  /** When the spend wrote it (its month counts against the limit, through the shift). */
  at: number;
  /** The payment its credit made (succeeded only). */
  payment: number | null;
}

/** What a command answers, reduced to what the contract fixes. */
export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

export const HOUR_MS = 3_600_000;
const PACK_TOKENS = 100;
const PACK_AMOUNT_MINOR = 499;
const PERIOD_TOKENS = 100;
const ROLLOVER_MAX = 30;

export function emptyWallet(now: number): ModelWallet {
  return {
    now,
    shift: 0,
    lots: [],
    holds: [],
    payments: [],
    invoices: 0,
    shortfalls: [],
    grants: [],
    debits: [],
    uses: [],
    limits: { daily: null, monthly: null },
    spends: [],
    entries: 0,
    autoTopup: null,
    attempts: [],
    seen: {},
  };
}

// ---------------------------------------------------------------- reading

export const balanceOf = (w: ModelWallet) => w.lots.reduce((sum, lot) => sum + lot.remaining, 0);
const isActive = (w: ModelWallet, hold: ModelHold) => hold.status === 'held' && hold.expiresAt > w.now;
export const heldOn = (w: ModelWallet, lotKey: number) =>
  w.holds
    .filter((hold) => isActive(w, hold))
    .flatMap((hold) => hold.lots)
    .filter((draw) => draw.lot === lotKey)
    .reduce((sum, draw) => sum + draw.amount, 0);
export const heldOf = (w: ModelWallet) =>
  w.holds.filter((hold) => isActive(w, hold)).reduce((sum, hold) => sum + hold.amount, 0);
export const availableOf = (w: ModelWallet) => balanceOf(w) - heldOf(w);
const unheld = (w: ModelWallet, lot: ModelLot) => lot.remaining - heldOn(w, lot.key);
const isExpired = (w: ModelWallet, lot: ModelLot) => lot.expiresAt !== null && lot.expiresAt <= w.now;
const rank: Record<Category, number> = { promotional: 0, subscription: 1, purchased: 2 };

/** The draw order: soonest expiry first (never last), promotional, subscription, purchased, oldest first. */
export function inDrawOrder(lots: ModelLot[]): ModelLot[] {
  return [...lots].sort(
    (a, b) =>
      (a.expiresAt ?? Number.POSITIVE_INFINITY) - (b.expiresAt ?? Number.POSITIVE_INFINITY) ||
      rank[a.category] - rank[b.category] ||
      a.key - b.key,
  );
}

export const lotOf = (w: ModelWallet, key: number) => {
  const lot = w.lots.find((l) => l.key === key);
  if (!lot) throw new Error(`model: no lot ${key}`);
  return lot;
};

/** What a spend or a new hold can draw: the unheld part of lots not expired (a voided lot keeps none). */
const spendable = (w: ModelWallet) =>
  inDrawOrder(w.lots.filter((lot) => !isExpired(w, lot) && !lot.voided)).map((lot) => ({
    lot,
    free: unheld(w, lot),
  }));

/** The wallet as `GET /v1/users/{userId}/wallet` shows it. */
export function walletView(w: ModelWallet) {
  return {
    balance: balanceOf(w),
    held: heldOf(w),
    available: availableOf(w),
    debt: debtOf(w),
    lots: inDrawOrder(w.lots.filter((lot) => lot.remaining > 0)).map((lot) => ({
      lot: lot.key,
      category: lot.category,
      amount: lot.amount,
      remaining: lot.remaining,
      held: heldOn(w, lot.key),
      expiresAt: lot.expiresAt === null ? null : systemTime(w, lot.expiresAt),
    })),
  };
}

/** An instant of the model as the system under test stores it (ISO). */
export const systemTime = (w: ModelWallet, at: number) => new Date(at - w.shift).toISOString();

export const saw = (w: ModelWallet, what: string) => {
  w.seen[what] = (w.seen[what] ?? 0) + 1;
};

// ---------------------------------------------------------------- moving tokens

function newLot(w: ModelWallet, lot: Omit<ModelLot, 'key' | 'remaining' | 'rolledOver' | 'rolloverKey' | 'voided'>) {
  const key = w.lots.length === 0 ? 1 : Math.max(...w.lots.map((l) => l.key)) + 1;
  const created: ModelLot = { ...lot, key, remaining: lot.amount, rolledOver: 0, rolloverKey: null, voided: false };
  w.lots.push(created);
  return created;
}

/** Takes up to `want` from the lots' unheld parts in the order given; returns the draws. */
function takeFrom(w: ModelWallet, lots: ModelLot[], want: number): Draw[] {
  const draws: Draw[] = [];
  let left = want;
  for (const lot of lots) {
    if (left <= 0) break;
    const take = Math.min(left, unheld(w, lot));
    if (take <= 0) continue;
    lot.remaining -= take;
    left -= take;
    const same = draws.find((d) => d.lot === lot.key);
    if (same) same.amount += take;
    else draws.push({ lot: lot.key, amount: take });
  }
  return draws;
}

/**
 * A take-back's order: the payment's own lot first, then the draw order over lots not expired,
 * then the expired ones (their tokens are still in the balance). Never a held token, never a
 * voided lot's (those are not the user's).
 */
function takeBackOrder(w: ModelWallet, firstLot: number | null): ModelLot[] {
  const candidates = w.lots.filter((lot) => !lot.voided);
  const first = candidates.filter((lot) => lot.key === firstLot);
  const rest = candidates.filter((lot) => lot.key !== firstLot);
  return [
    ...first,
    ...inDrawOrder(rest.filter((lot) => !isExpired(w, lot))),
    ...inDrawOrder(rest.filter((lot) => isExpired(w, lot))),
  ];
}

/** A void is a standing state: whatever is unheld in a voided lot is taken at once, one entry per lot. */
function takeVoidedRemainders(w: ModelWallet, only?: number): number {
  let taken = 0;
  for (const lot of w.lots) {
    if (!lot.voided || (only !== undefined && lot.key !== only)) continue;
    const take = unheld(w, lot);
    if (take <= 0) continue;
    lot.remaining -= take;
    w.entries += 1;
    taken += take;
  }
  return taken;
}

/**
 * Tokens a hold frees (released, captured for less, lapsed) settle the open shortfalls of
 * take-backs that ran while it was active (holds.md "The shortfall rule"), oldest first, at most
 * what was freed and what is available, in one take-back entry.
 */
function recoverShortfalls(w: ModelWallet, hold: ModelHold, freed: number) {
  const open = w.shortfalls.filter((s) => s.open > 0 && s.marker >= hold.marker && s.createdAt < hold.expiresAt);
  if (open.length === 0 || freed <= 0) return;
  const recovered = settleShortfalls(w, open, Math.min(freed, availableOf(w)));
  if (recovered > 0) {
    saw(w, 'a hold settled a shortfall');
    const drawn = takeFrom(w, takeBackOrder(w, null), recovered);
    const got = drawn.reduce((s, d) => s + d.amount, 0);
    if (got !== recovered) throw new Error('model: a recovery found less than available');
    w.entries += 1;
  }
}

/**
 * Settles up to `budget` of the given open shortfalls, oldest first; the take-backs' records move
 * with what is settled (the payment's tokens refunded and shortfall, the dispute's taken). Returns
 * what was settled (the caller takes it from the wallet in one entry).
 */
function settleShortfalls(w: ModelWallet, open: ModelShortfall[], budget: number): number {
  let settled = 0;
  for (const shortfall of open) {
    const take = Math.min(budget - settled, shortfall.open);
    if (take <= 0) break;
    settled += take;
    shortfall.open -= take;
    if (shortfall.kind === 'priced') continue;
    const payment = w.payments.find((p) => p.key === shortfall.payment);
    if (!payment) throw new Error('model: shortfall of no payment');
    payment.tokensRefunded += take;
    payment.refundShortfall -= take;
    if (shortfall.kind === 'dispute' && payment.dispute) {
      payment.dispute.taken += take;
      payment.dispute.shortfall -= take;
    }
  }
  return settled;
}

/** The wallet's debt: what take-backs and priced captures could not take and nothing settled since. */
export const debtOf = (w: ModelWallet) => w.shortfalls.reduce((sum, s) => sum + s.open, 0);

/**
 * A paid credit (a pack, period credits) or a grant that asks settles the debt first (DEBT_POLICY
 * settle): its lot is created whole, then one entry takes `min(debt, credit)` from that lot.
 */
function settleDebtFrom(w: ModelWallet, lot: ModelLot): number {
  const settled = settleShortfalls(
    w,
    w.shortfalls.filter((s) => s.open > 0),
    Math.min(debtOf(w), lot.amount),
  );
  if (settled <= 0) return 0;
  saw(w, 'a credit settled debt');
  lot.remaining -= settled;
  w.entries += 1;
  return settled;
}

/**
 * Support forgives `amount` of the debt (all when null), oldest first: the debt goes down, no token
 * moves, the take-backs' own records stay.
 */
export function forgiveDebt(w: ModelWallet, amount: number | null): Answer {
  const debt = debtOf(w);
  let left = Math.min(amount ?? debt, debt);
  const forgiven = left;
  for (const shortfall of w.shortfalls) {
    const take = Math.min(left, shortfall.open);
    shortfall.open -= take;
    left -= take;
  }
  if (forgiven > 0) saw(w, 'support forgave debt');
  return { status: 200, body: { forgiven, debt: debt - forgiven } };
}

/** The end of a hold frees `freed` tokens of its lots (the part not captured): voided ones are taken. */
function applyHoldEnd(w: ModelWallet, hold: ModelHold, freedByLot: Draw[]) {
  const onVoided = freedByLot.filter((d) => lotOf(w, d.lot).voided).reduce((sum, d) => sum + d.amount, 0);
  const freed = freedByLot.reduce((sum, d) => sum + d.amount, 0);
  if (takeVoidedRemainders(w) > 0) saw(w, 'a hold on a voided lot ended');
  recoverShortfalls(w, hold, freed - onVoided);
}

/** Applies the end of every hold that lapsed and was not settled yet (the next wallet operation does). */
export function settleLapsed(w: ModelWallet) {
  for (const hold of w.holds) {
    if (hold.status !== 'held' || hold.settled || hold.expiresAt > w.now) continue;
    hold.settled = true;
    giveBackUse(w, hold);
    applyHoldEnd(w, hold, hold.lots);
  }
}

// ---------------------------------------------------------------- commands

export function grant(
  w: ModelWallet,
  g: { reference: string; admin: boolean; amount: number; expiresAt: number | null; settlesDebt: boolean },
): Answer {
  const before = w.grants.find((x) => x.reference === g.reference && x.admin === g.admin);
  const ledgerReference = `${g.admin ? 'admin:grant' : 'grant'}:${g.reference}`;
  if (before) {
    if (before.amount !== g.amount || before.expiresAt !== g.expiresAt)
      return { status: 409, body: { code: 'reference_conflict' } };
    return {
      status: 200,
      body: grantBody(
        w,
        ledgerReference,
        before.lot,
        before.amount,
        before.expiresAt,
        before.balanceAfter,
        before.debtSettled,
      ),
    };
  }
  const lot = newLot(w, {
    category: 'promotional',
    origin: { kind: g.admin ? 'admin-grant' : 'grant', reference: g.reference },
    amount: g.amount,
    expiresAt: g.expiresAt,
    rolloverMax: 0,
  });
  w.entries += 1;
  const debtSettled = g.settlesDebt ? settleDebtFrom(w, lot) : 0;
  const balance = balanceOf(w);
  w.grants.push({ ...g, lot: lot.key, balanceAfter: balance, debtSettled });
  return { status: 201, body: grantBody(w, ledgerReference, lot.key, g.amount, g.expiresAt, balance, debtSettled) };
}

const grantBody = (
  w: ModelWallet,
  ledgerReference: string,
  lot: number,
  amount: number,
  expiresAt: number | null,
  balance: number,
  debtSettled: number,
) => ({
  ledgerReference,
  lot,
  amount,
  expiresAt: expiresAt === null ? null : systemTime(w, expiresAt),
  balance,
  debtSettled,
});

/** A Stripe pack paid (tokens_100): a purchased lot that never expires. */
export function payPack(w: ModelWallet, store?: Store): { answer: Answer; payment: number } {
  const key = w.payments.length;
  const lot = newLot(w, {
    category: 'purchased',
    origin: { kind: 'payment', payment: key },
    amount: PACK_TOKENS,
    expiresAt: null,
    rolloverMax: 0,
  });
  w.entries += 1;
  settleDebtFrom(w, lot);
  w.payments.push({
    key,
    lot: lot.key,
    granted: PACK_TOKENS,
    amountMinor: PACK_AMOUNT_MINOR,
    amountRefundedMinor: 0,
    tokensRefunded: 0,
    refundShortfall: 0,
    dispute: null,
    ...(store ? { store } : {}),
  });
  return { answer: { status: 200, body: { outcome: 'credited' } }, payment: key };
}

/** A paid invoice of the rollover price: period credits that expire at the period end. */
export function payInvoice(w: ModelWallet, periodEnd: number): Answer {
  const invoice = w.invoices;
  w.invoices += 1;
  const lot = newLot(w, {
    category: 'subscription',
    origin: { kind: 'invoice', invoice },
    amount: PERIOD_TOKENS,
    expiresAt: periodEnd,
    rolloverMax: ROLLOVER_MAX,
  });
  w.entries += 1;
  settleDebtFrom(w, lot);
  return { status: 200, body: { outcome: 'credited' } };
}

const refundTarget = (p: ModelPayment) =>
  p.amountRefundedMinor >= p.amountMinor ? p.granted : Math.floor((p.granted * p.amountRefundedMinor) / p.amountMinor);

/** Takes `owed` back for a payment: what is available, the rest a shortfall. */
function takeBack(w: ModelWallet, p: ModelPayment, owed: number, kind: 'refund' | 'dispute') {
  const draws = takeFrom(w, takeBackOrder(w, p.lot), owed);
  const taken = draws.reduce((s, d) => s + d.amount, 0);
  if (taken > 0) w.entries += 1;
  p.tokensRefunded += taken;
  p.refundShortfall += owed - taken;
  if (owed - taken > 0) {
    w.shortfalls.push({ payment: p.key, kind, open: owed - taken, marker: w.entries, createdAt: w.now });
  }
  return { draws, taken };
}

/** `charge.refunded` with the charge's cumulative amount refunded. */
export function refund(w: ModelWallet, paymentKey: number, amountRefundedMinor: number): Answer {
  const p = w.payments[paymentKey];
  if (!p) throw new Error('model: no payment');
  if (amountRefundedMinor <= p.amountRefundedMinor) return { status: 200, body: { outcome: 'already_refunded' } };
  settleLapsed(w);
  p.amountRefundedMinor = amountRefundedMinor;
  if (p.dispute && !p.dispute.reinstated) p.dispute.refundedSince = true;
  const owed = refundTarget(p) - (p.tokensRefunded + p.refundShortfall);
  if (owed > 0) takeBack(w, p, owed, 'refund');
  return {
    status: 200,
    body: { outcome: amountRefundedMinor >= p.amountMinor ? 'refunded' : 'partially_refunded' },
  };
}

/**
 * An App Store `REFUND` of a pack, or a voided Google Play purchase (product.md "The stores,
 * directly"): the store refunds the whole purchase, so what the payment granted and no earlier
 * take-back accounted for is taken back, from its lot first, the rest owed (debt); once.
 */
export function storeRefund(w: ModelWallet, paymentKey: number): Answer {
  const p = w.payments[paymentKey];
  if (!p) throw new Error('model: no payment');
  if (p.amountRefundedMinor >= p.amountMinor) return { status: 200, body: { outcome: 'already_refunded' } };
  settleLapsed(w);
  p.amountRefundedMinor = p.amountMinor;
  const owed = Math.max(0, p.granted - (p.tokensRefunded + p.refundShortfall));
  if (owed === 0) return { status: 200, body: { outcome: 'already_refunded' } };
  const { taken } = takeBack(w, p, owed, 'refund');
  if (taken < owed) saw(w, 'a store refund left debt');
  return { status: 200, body: { outcome: taken < owed ? 'partially_refunded' : 'refunded' } };
}

/**
 * A take-back first applies the end of holds that lapsed (what they freed on a voided lot is not
 * the user's: "taken at once"), then takes what the payment owes.
 */
function withdraw(w: ModelWallet, p: ModelPayment) {
  settleLapsed(w);
  const owed = Math.max(0, p.granted - (p.tokensRefunded + p.refundShortfall));
  const { draws, taken } = takeBack(w, p, owed, 'dispute');
  p.dispute = {
    owed,
    taken,
    shortfall: owed - taken,
    reinstated: false,
    tokensReinstated: 0,
    draws,
    refundedSince: false,
  };
}

/** `charge.dispute.funds_withdrawn`: everything the payment granted that no refund accounted for. */
export function disputeWithdrawn(w: ModelWallet, paymentKey: number): Answer {
  const p = w.payments[paymentKey];
  if (!p) throw new Error('model: no payment');
  if (p.dispute) return { status: 200, body: { outcome: 'dispute_already_applied' } };
  withdraw(w, p);
  return { status: 200, body: { outcome: 'dispute_funds_withdrawn' } };
}

/**
 * `charge.dispute.funds_reinstated`: gives back exactly what was taken, but a payment never ends
 * up having given more than it still pays for: only what the refunds do not take back, first
 * forgiving the shortfall, then returning tokens to the lots the withdrawal drew, in its order.
 */
export function disputeReinstated(w: ModelWallet, paymentKey: number): Answer {
  const p = w.payments[paymentKey];
  if (!p) throw new Error('model: no payment');
  if (p.dispute?.reinstated) return { status: 200, body: { outcome: 'dispute_already_applied' } };
  if (!p.dispute) withdraw(w, p);
  const d = p.dispute as ModelDispute;
  d.reinstated = true;
  const release = Math.min(Math.max(0, p.tokensRefunded + p.refundShortfall - refundTarget(p)), d.owed);
  const forgiven = Math.min(release, d.shortfall);
  d.shortfall -= forgiven;
  p.refundShortfall -= forgiven;
  let toForgive = forgiven;
  for (const s of w.shortfalls) {
    if (s.payment !== p.key || s.kind !== 'dispute') continue;
    const x = Math.min(toForgive, s.open);
    s.open -= x;
    toForgive -= x;
  }
  const giveBack = Math.min(release - forgiven, d.taken);
  if (d.refundedSince) saw(w, 'a dispute refunded, then won');
  p.tokensRefunded -= giveBack;
  d.tokensReinstated = giveBack;
  if (giveBack > 0) {
    let left = giveBack;
    for (const draw of d.draws) {
      const lot = lotOf(w, draw.lot);
      const back = Math.min(left, draw.amount, lot.amount - lot.remaining);
      if (back <= 0) continue;
      lot.remaining += back;
      left -= back;
    }
    w.entries += 1;
    if (left > 0) {
      newLot(w, {
        category: 'purchased',
        origin: { kind: 'give-back', payment: p.key },
        amount: left,
        expiresAt: null,
        rolloverMax: 0,
      });
    }
    takeVoidedRemainders(w);
  }
  return { status: 200, body: { outcome: 'dispute_funds_reinstated' } };
}

/**
 * A spend or a hold needs `available` and then lots it can draw. The 402's `available` is the
 * wallet's, except when the tokens are there but not spendable (an expired lot the sweeper has not
 * taken yet): then it is what could be drawn (docs/lots.md: "a spend past the spendable tokens").
 */
function shortOf(w: ModelWallet, amount: number): Answer | null {
  const available = availableOf(w);
  if (amount > available)
    return { status: 402, body: { code: 'insufficient_balance', available: Math.max(0, available) } };
  const free = spendable(w).reduce((s, x) => s + x.free, 0);
  if (amount > free) return { status: 402, body: { code: 'insufficient_balance', available: free } };
  return null;
}

export function debit(w: ModelWallet, reference: string, amount: number): Answer {
  settleLapsed(w);
  const before = w.debits.find((d) => d.reference === reference);
  if (before) {
    if (before.amount !== amount) return { status: 409, body: { code: 'reference_conflict' } };
    return {
      status: 200,
      body: { amount, balance: before.balanceAfter, available: availableOf(w), draws: before.draws },
    };
  }
  const refused = limitRefusal(w, amount);
  if (refused) return refused;
  const short = shortOf(w, amount);
  if (short) return short;
  const draws = takeFrom(
    w,
    spendable(w).map((x) => x.lot),
    amount,
  );
  w.entries += 1;
  const balance = balanceOf(w);
  // The answer lists what it drew from each lot; the contract gives the list no order.
  draws.sort((a, b) => a.lot - b.lot);
  w.debits.push({ reference, amount, balanceAfter: balance, draws });
  countSpend(w, amount);
  triggerAutoTopup(w);
  return { status: 201, body: { amount, balance, available: availableOf(w), draws } };
}

export function placeHold(
  w: ModelWallet,
  reference: string,
  amount: number,
  ttlMs: number,
): Answer & { hold?: number } {
  settleLapsed(w);
  return reserve(w, reference, amount, ttlMs, null);
}

/** A hold of `amount` (a hold by estimate: its use's key), from the spendable lots in the draw order. */
function reserve(
  w: ModelWallet,
  reference: string,
  amount: number,
  ttlMs: number,
  use: number | null,
): Answer & { hold?: number } {
  const refused = limitRefusal(w, amount);
  if (refused) return refused;
  const short = shortOf(w, amount);
  if (short) return short;
  const free = spendable(w);
  const lots: Draw[] = [];
  let left = amount;
  for (const { lot, free: f } of free) {
    const take = Math.min(left, f);
    if (take <= 0) continue;
    lots.push({ lot: lot.key, amount: take });
    left -= take;
    if (left === 0) break;
  }
  const key = w.holds.length;
  w.holds.push({
    key,
    reference,
    amount,
    expiresAt: w.now + ttlMs,
    status: 'held',
    settled: false,
    lots,
    marker: w.entries,
    captured: 0,
    use,
    pricedAnswer: null,
  });
  triggerAutoTopup(w);
  return { status: 201, body: { status: 'held', amount, available: availableOf(w) }, hold: key };
}

export function captureHold(w: ModelWallet, holdKey: number, amount: number | undefined): Answer {
  settleLapsed(w);
  const hold = w.holds[holdKey];
  if (!hold) throw new Error('model: no hold');
  if (hold.status === 'captured')
    return {
      status: 200,
      body: { status: 'captured', captured: hold.captured, released: hold.amount - hold.captured },
    };
  if (hold.status === 'released' || hold.expiresAt <= w.now) return { status: 409, body: { code: 'hold_not_active' } };
  // A hold by estimate is captured by its actual quantities, never by an amount.
  if (hold.use !== null) return { status: 400, body: { code: 'invalid_request' } };
  const captured = amount ?? hold.amount;
  if (captured > hold.amount) return { status: 400, body: { code: 'invalid_request' } };
  const freedByLot = captureFromHold(w, hold, captured);
  countSpend(w, captured);
  applyHoldEnd(w, hold, freedByLot);
  return {
    status: 200,
    body: {
      status: 'captured',
      captured,
      released: hold.amount - captured,
      balance: balanceOf(w),
      available: availableOf(w),
    },
  };
}

/** Captures `captured` of a hold: drawn exactly from what it reserved, in its order; returns what is freed. */
function captureFromHold(w: ModelWallet, hold: ModelHold, captured: number): Draw[] {
  const freedByLot: Draw[] = [];
  let left = captured;
  for (const draw of hold.lots) {
    const take = Math.min(left, draw.amount);
    left -= take;
    lotOf(w, draw.lot).remaining -= take;
    if (draw.amount - take > 0) freedByLot.push({ lot: draw.lot, amount: draw.amount - take });
  }
  hold.status = 'captured';
  hold.captured = captured;
  if (captured > 0) w.entries += 1;
  return freedByLot;
}

export function releaseHold(w: ModelWallet, holdKey: number): Answer {
  settleLapsed(w);
  const hold = w.holds[holdKey];
  if (!hold) throw new Error('model: no hold');
  if (hold.status === 'released') return { status: 200, body: { status: 'released' } };
  if (hold.status === 'captured' || hold.expiresAt <= w.now) return { status: 409, body: { code: 'hold_not_active' } };
  hold.status = 'released';
  giveBackUse(w, hold);
  applyHoldEnd(w, hold, hold.lots);
  return { status: 200, body: { status: 'released', available: availableOf(w) } };
}

export function voidLot(w: ModelWallet, lotKey: number): Answer {
  settleLapsed(w);
  const lot = lotOf(w, lotKey);
  const alreadyVoided = lot.voided;
  lot.voided = true;
  const taken = takeVoidedRemainders(w, lotKey);
  return { status: 200, body: { taken, balance: balanceOf(w), alreadyVoided } };
}

// ---------------------------------------------------------------- features and prices

const DAY_MS = 24 * HOUR_MS;
/** The UTC day an instant falls in as the system sees it (its stored times are moved back by `shift`). */
const systemDay = (w: ModelWallet, at: number) => Math.floor((at - w.shift) / DAY_MS);

/**
 * The free allowance (product.md "Features and prices"): a use is free while the free uses of its
 * group in the system's UTC day, not given back (a released or lapsed hold's), are fewer than the
 * allowance's uses. One decision for usage and holds by estimate.
 */
function decideCharge(w: ModelWallet, spec: UseSpec): { cost: number; freeTier: boolean } {
  const cost = costOf(spec);
  const allowance = featureOf(spec.feature).allowance;
  if (!allowance) return { cost, freeTier: false };
  const today = systemDay(w, w.now);
  const used = w.uses.filter(
    (use) =>
      use.freeTier &&
      !use.givenBack &&
      featureOf(use.spec.feature).allowance?.group === allowance.group &&
      systemDay(w, use.at) === today,
  ).length;
  if (used >= allowance.uses) return { cost, freeTier: false };
  saw(w, used > 0 ? 'a group shared its free allowance' : 'a free use');
  return { cost: 0, freeTier: true };
}

const sameSpec = (a: UseSpec, b: UseSpec) =>
  a.feature === b.feature &&
  a.variant === b.variant &&
  JSON.stringify(Object.entries(a.quantities).sort()) === JSON.stringify(Object.entries(b.quantities).sort());

function newUse(w: ModelWallet, use: Omit<ModelUse, 'key' | 'givenBack'>): ModelUse {
  const created = { ...use, key: w.uses.length, givenBack: false };
  w.uses.push(created);
  return created;
}

function giveBackUse(w: ModelWallet, hold: ModelHold) {
  if (hold.use === null) return;
  const use = w.uses[hold.use];
  if (!use) throw new Error('model: a hold of no use');
  if (use.freeTier) saw(w, 'a hold gave its free use back');
  use.givenBack = true;
}

/** `POST …/usage`: priced, the allowance decided, the cost spent like a debit (a free or zero cost posts nothing). */
export function usage(w: ModelWallet, reference: string, spec: UseSpec): Answer {
  settleLapsed(w);
  const before = w.uses.find((use) => use.reference === reference);
  if (before) {
    if (!sameSpec(before.spec, spec)) return { status: 409, body: { code: 'reference_conflict' } };
    saw(w, 'a usage retried');
    return { status: 200, body: before.answer ?? {} };
  }
  const charge = decideCharge(w, spec);
  const refused = limitRefusal(w, charge.cost);
  if (refused) return refused;
  const short = shortOf(w, charge.cost);
  if (short)
    return { status: 402, body: { code: 'insufficient_balance', cost: charge.cost, available: short.body.available } };
  const draws = takeFrom(
    w,
    spendable(w).map((x) => x.lot),
    charge.cost,
  );
  if (charge.cost > 0) w.entries += 1;
  draws.sort((a, b) => a.lot - b.lot);
  const answer = {
    feature: spec.feature,
    variant: spec.variant,
    quantities: spec.quantities,
    cost: charge.cost,
    freeTier: charge.freeTier,
    balance: balanceOf(w),
    available: availableOf(w),
    draws,
  };
  newUse(w, { reference, spec, cost: charge.cost, freeTier: charge.freeTier, at: w.now, answer });
  countSpend(w, charge.cost);
  if (charge.cost > 0) triggerAutoTopup(w);
  return { status: 201, body: answer };
}

/** `POST …/holds` by estimate: the estimate priced and the allowance decided as for a usage; the hold reserves its cost. */
export function placePricedHold(
  w: ModelWallet,
  reference: string,
  spec: UseSpec,
  ttlMs: number,
): Answer & { hold?: number } {
  settleLapsed(w);
  const charge = decideCharge(w, spec);
  const key = w.uses.length;
  const placed = reserve(w, reference, charge.cost, ttlMs, key);
  if (placed.hold !== undefined) {
    newUse(w, { reference: null, spec, cost: charge.cost, freeTier: charge.freeTier, at: w.now, answer: null });
  }
  return placed;
}

/**
 * `POST …/holds/{id}/capture` with the actual quantities: their cost at the hold's prices (0 for a
 * free use); what the hold covers is captured and the rest freed; past it, the excess is taken from
 * what can be spent now, and what is still missing is owed (a shortfall the next freed hold may settle).
 */
export function capturePricedHold(w: ModelWallet, holdKey: number, quantities: Record<string, number>): Answer {
  settleLapsed(w);
  const hold = w.holds[holdKey];
  if (!hold) throw new Error('model: no hold');
  if (hold.use === null) return { status: 400, body: { code: 'invalid_request' } };
  if (hold.status === 'captured') return { status: 200, body: hold.pricedAnswer ?? {} };
  if (hold.status === 'released' || hold.expiresAt <= w.now) return { status: 409, body: { code: 'hold_not_active' } };
  const use = w.uses[hold.use];
  if (!use) throw new Error('model: a hold of no use');
  const actual = { ...use.spec, quantities };
  const cost = use.freeTier ? 0 : costOf(actual);
  const captured = Math.min(cost, hold.amount);
  saw(w, use.freeTier ? 'a free hold by estimate captured' : 'a hold by estimate captured');
  applyHoldEnd(w, hold, captureFromHold(w, hold, captured));
  countSpend(w, captured);
  const wanted = cost - captured;
  let excess = 0;
  if (wanted > 0) {
    const free = spendable(w).reduce((sum, x) => sum + x.free, 0);
    excess = Math.min(wanted, free, Math.max(0, availableOf(w)));
    takeFrom(
      w,
      spendable(w).map((x) => x.lot),
      excess,
    );
    if (excess > 0) w.entries += 1;
    countSpend(w, excess);
    saw(w, excess < wanted ? 'a priced capture left debt' : 'a priced capture took an excess');
  }
  const debt = wanted - excess;
  if (debt > 0) w.shortfalls.push({ payment: null, kind: 'priced', open: debt, marker: w.entries, createdAt: w.now });
  use.spec = actual;
  use.cost = cost;
  hold.pricedAnswer = {
    status: 'captured',
    captured,
    released: hold.amount - captured,
    cost,
    quantities,
    excess,
    debt,
    balance: balanceOf(w),
    available: availableOf(w),
  };
  return { status: 200, body: hold.pricedAnswer };
}

// ---------------------------------------------------------------- spend limits

/** The system's UTC month of an instant (`YYYY-MM`), through the shift as its UTC day is. */
export const systemMonth = (w: ModelWallet, at: number) => new Date(at - w.shift).toISOString().slice(0, 7);

/** Tokens spent in the system's current UTC day or calendar month (every stored time moved back by the shift). */
function spentIn(w: ModelWallet, period: 'daily' | 'monthly'): number {
  const same =
    period === 'daily'
      ? (at: number) => systemDay(w, at) === systemDay(w, w.now)
      : (at: number) => systemMonth(w, at) === systemMonth(w, w.now);
  return w.spends.filter((spend) => same(spend.at)).reduce((sum, spend) => sum + spend.amount, 0);
}

/** When the system's current day or month ends (ISO, UTC). */
function resetsAt(w: ModelWallet, period: 'daily' | 'monthly'): string {
  const day = new Date(systemDay(w, w.now) * DAY_MS);
  const end = period === 'daily' ? day.getTime() + DAY_MS : Date.UTC(day.getUTCFullYear(), day.getUTCMonth() + 1, 1);
  return new Date(end).toISOString();
}

function countSpend(w: ModelWallet, amount: number) {
  if (amount > 0) w.spends.push({ at: w.now, amount });
}

/**
 * Auto top-up's trigger (product.md "Auto top-up"): a spend that leaves `available` below the
 * threshold, with auto top-up on (and a card: the model saves one when it enables it), no attempt
 * in flight and fewer than the monthly limit of attempts in flight or succeeded in the system's
 * calendar month, writes a pending attempt. Nothing is charged until the worker runs it.
 */
function triggerAutoTopup(w: ModelWallet) {
  const a = w.autoTopup;
  if (!a?.enabled || availableOf(w) >= a.threshold) return;
  if (w.attempts.some((attempt) => attempt.status === 'pending')) {
    saw(w, 'a dip while an auto top-up was in flight');
    return;
  }
  const month = systemMonth(w, w.now);
  const counted = w.attempts.filter(
    (attempt) => attempt.status !== 'failed' && attempt.status !== 'canceled' && systemMonth(w, attempt.at) === month,
  );
  if (counted.length >= a.monthlyLimit) {
    saw(w, 'the auto top-up monthly limit held');
    return;
  }
  w.attempts.push({ status: 'pending', at: w.now, payment: null });
}

/**
 * The spend limits (product.md "Debt", its last part): a new debit, usage or hold of `amount`
 * tokens is refused when what was spent in the system's UTC day (or calendar month), plus what
 * active holds reserve, plus `amount`, passes that period's limit; nothing is spent. A spend of
 * nothing is never refused. Asked after the reference fence, before the balance.
 */
function limitRefusal(w: ModelWallet, amount: number): Answer | null {
  if (amount <= 0) return null;
  for (const period of ['daily', 'monthly'] as const) {
    const limit = w.limits[period];
    const spent = spentIn(w, period);
    const held = heldOf(w);
    if (limit === null || spent + held + amount <= limit) continue;
    saw(w, `a ${period} spend limit refused a spend`);
    return {
      status: 402,
      body: {
        code: 'spend_limit_reached',
        period,
        limit,
        spent,
        held,
        requested: amount,
        resetsAt: resetsAt(w, period),
      },
    };
  }
  return null;
}

/** `PUT …/limits`: a number sets a period's limit, null removes it, absent leaves it; answers the limits. */
export function setLimits(w: ModelWallet, change: { daily?: number | null; monthly?: number | null }): Answer {
  if (change.daily !== undefined) w.limits.daily = change.daily;
  if (change.monthly !== undefined) w.limits.monthly = change.monthly;
  const view = (period: 'daily' | 'monthly') => ({
    limit: w.limits[period],
    source: w.limits[period] === null ? 'none' : 'user',
    spent: spentIn(w, period),
    resetsAt: resetsAt(w, period),
  });
  return { status: 200, body: { held: heldOf(w), daily: view('daily'), monthly: view('monthly') } };
}

/** From now to the soonest expiry still ahead (a lot with tokens left, an active hold); an hour if none. */
export function untilNextExpiry(w: ModelWallet): number {
  const ahead = [
    ...w.lots.filter((lot) => lot.remaining > 0 && lot.expiresAt !== null).map((lot) => lot.expiresAt as number),
    ...w.holds.filter((hold) => isActive(w, hold)).map((hold) => hold.expiresAt),
  ].filter((at) => at > w.now);
  return ahead.length === 0 ? HOUR_MS : Math.max(HOUR_MS, Math.min(...ahead) - w.now);
}

export function advance(w: ModelWallet, ms: number) {
  w.now += ms;
  w.shift += ms;
}

/** Postgres's `timestamptz + interval '1 month'` in UTC: the same day next month, clamped to its end. */
function monthLater(ms: number): number {
  const d = new Date(ms);
  const year = d.getUTCFullYear() + (d.getUTCMonth() === 11 ? 1 : 0);
  const month = (d.getUTCMonth() + 1) % 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return Date.UTC(
    year,
    month,
    Math.min(d.getUTCDate(), lastDay),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds(),
  );
}

/**
 * The expiry sweeper: lapsed holds settled, then every lot that reached its expiry with unheld
 * tokens, oldest first: up to what its rollover allowance still allows goes to its rollover lot
 * (one per lot, a month after it, never rolling over again), the rest expires.
 */
export function sweep(w: ModelWallet) {
  settleLapsed(w);
  // In key order, including a rollover lot made in this pass (keys grow with creation, and a
  // rollover lot comes after its lot): one made already expired expires in the same pass.
  for (let index = 0; index < w.lots.length; index += 1) {
    const lot = w.lots[index] as ModelLot;
    if (!isExpired(w, lot)) continue;
    const expirable = unheld(w, lot);
    if (expirable <= 0) continue;
    const roll = lot.category === 'subscription' ? Math.min(expirable, lot.rolloverMax - lot.rolledOver) : 0;
    if (roll > 0) {
      if (lot.rolledOver > 0) saw(w, 'a lot rolled over again');
      lot.remaining -= roll;
      lot.rolledOver += roll;
      if (lot.rolloverKey === null) {
        const expiresAt = monthLater((lot.expiresAt as number) - w.shift) + w.shift;
        const created = newLot(w, {
          category: 'subscription',
          origin: { kind: 'rollover', of: lot.key },
          amount: roll,
          expiresAt,
          rolloverMax: 0,
        });
        lot.rolloverKey = created.key;
      } else {
        const into = lotOf(w, lot.rolloverKey);
        into.amount += roll;
        into.remaining += roll;
      }
    }
    const rest = expirable - roll;
    if (rest > 0) {
      lot.remaining -= rest;
      w.entries += 1;
    }
  }
}
