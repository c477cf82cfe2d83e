import { isDeepStrictEqual } from 'node:util';
import type { Json } from '../support/stack';
import * as AT from './auto-topup-model';
import * as M from './money-model';
import type { RealSystem, RealUser } from './real-system';

/**
 * The commands of the model check. Each is generated with indices, not ids (a hold, a lot, a
 * payment of the sequence so far, taken modulo how many exist), so a shrunk sequence stays
 * meaningful; `plan` turns it into an operation on the model's keys just before it runs. Its
 * toString() renders the call that builds it, so a shrunk sequence pastes into a test.
 */

export interface Op {
  kind: string;
  [field: string]: unknown;
}

export interface Outcome {
  answer: M.Answer;
  /** A hold the operation placed (its model key), to pair with the real hold id. */
  hold?: number;
}

export interface World {
  users: { w: M.ModelWallet; real: RealUser; next: number }[];
  system: RealSystem;
  /** Commands run so far (for the report). */
  steps: number;
  /** The commands of the current sequence that ran, in order. */
  executed: MoneyCommand[];
}

export abstract class MoneyCommand {
  /** Which user of the sequence it acts on (0 in the sequential mode). */
  user = 0;
  abstract applies(w: M.ModelWallet): boolean;
  /** fast-check's: a command whose target does not exist yet is skipped. */
  check(world: World): boolean {
    const user = world.users[this.user];
    return user !== undefined && this.applies(user.w);
  }
  async run(world: World, _real: World): Promise<void> {
    world.executed.push(this);
    await runOne(world, this);
  }
  abstract plan(w: M.ModelWallet, reference: string): Op;
  /** Runs on a copy of the model in a batch's search, so it must not reach outside `w`. */
  abstract model(w: M.ModelWallet, op: Op): Outcome;
  abstract real(u: RealUser, op: Op, w: M.ModelWallet): Promise<{ status: number; json: Json }>;
  /** Whether it takes part in concurrent batches (an api call that locks the wallet). */
  concurrent = false;
  abstract toString(): string;
}

const hours = (h: number) => h * M.HOUR_MS;
const pick = <T>(items: T[], index: number): T | undefined =>
  items.length === 0 ? undefined : items[index % items.length];
/** Stripe's payments (refunds by amount, disputes) and the App Store's (refunded whole). */
const stripePayments = (w: M.ModelWallet) => w.payments.filter((p) => p.store === undefined);
const storePayments = (store: M.Store) => (w: M.ModelWallet) => w.payments.filter((p) => p.store === store);
const applePayments = storePayments('apple');
const googlePayments = storePayments('google_play');

export class Grant extends MoneyCommand {
  override concurrent = true;
  constructor(
    readonly amount: number,
    readonly expiresInHours: number | null,
    readonly admin: boolean,
    readonly settlesDebt = false,
  ) {
    super();
  }
  applies() {
    return true;
  }
  plan(w: M.ModelWallet, reference: string): Op {
    return {
      kind: 'grant',
      reference,
      expiresAt: this.expiresInHours === null ? null : w.now + hours(this.expiresInHours),
    };
  }
  model(w: M.ModelWallet, op: Op) {
    return {
      answer: M.grant(w, {
        reference: op.reference as string,
        admin: this.admin,
        amount: this.amount,
        expiresAt: op.expiresAt as number | null,
        settlesDebt: this.settlesDebt,
      }),
    };
  }
  real(u: RealUser, op: Op, w: M.ModelWallet) {
    const expiresAt = op.expiresAt === null ? null : M.systemTime(w, op.expiresAt as number);
    return u.grant(op.reference as string, this.amount, expiresAt, this.admin, this.settlesDebt);
  }
  toString() {
    return `new Grant(${this.amount}, ${this.expiresInHours}, ${this.admin}${this.settlesDebt ? ', true' : ''})`;
  }
}

export class PayPack extends MoneyCommand {
  applies() {
    return true;
  }
  plan(): Op {
    return { kind: 'pack' };
  }
  model(w: M.ModelWallet) {
    return { answer: M.payPack(w).answer };
  }
  real(u: RealUser) {
    return u.payPack();
  }
  toString() {
    return 'new PayPack()';
  }
}

/** A pack bought through StoreKit: a signed `ONE_TIME_CHARGE` of `com.tally.tokens.100` for the user's appAccountToken. */
export class PayApplePack extends MoneyCommand {
  applies() {
    return true;
  }
  plan(): Op {
    return { kind: 'apple-pack' };
  }
  model(w: M.ModelWallet) {
    return { answer: M.payPack(w, 'apple').answer };
  }
  real(u: RealUser) {
    return u.payApplePack();
  }
  toString() {
    return 'new PayApplePack()';
  }
}

/** Apple refunds an App Store pack: a signed `REFUND` of its transaction (the same refund again is a redelivery). */
export class AppleRefund extends MoneyCommand {
  constructor(readonly payment: number) {
    super();
  }
  applies(w: M.ModelWallet) {
    return applePayments(w).length > 0;
  }
  plan(w: M.ModelWallet): Op {
    return { kind: 'apple-refund', payment: (pick(applePayments(w), this.payment) as M.ModelPayment).key };
  }
  model(w: M.ModelWallet, op: Op) {
    return { answer: M.storeRefund(w, op.payment as number) };
  }
  real(u: RealUser, op: Op, w: M.ModelWallet) {
    return u.appleRefund(op.payment as number, w);
  }
  toString() {
    return `new AppleRefund(${this.payment})`;
  }
}

/** A pack bought on Google Play: its purchase set in the fake Play API, then a signed Pub/Sub push of PURCHASED. */
export class PayGooglePack extends MoneyCommand {
  applies() {
    return true;
  }
  plan(): Op {
    return { kind: 'google-pack' };
  }
  model(w: M.ModelWallet) {
    return { answer: M.payPack(w, 'google_play').answer };
  }
  real(u: RealUser) {
    return u.payGooglePack();
  }
  toString() {
    return 'new PayGooglePack()';
  }
}

/** Google voids a Play pack (refund, chargeback): a signed push of its voidedPurchaseNotification (again: a redelivery). */
export class GoogleVoided extends MoneyCommand {
  constructor(readonly payment: number) {
    super();
  }
  applies(w: M.ModelWallet) {
    return googlePayments(w).length > 0;
  }
  plan(w: M.ModelWallet): Op {
    return { kind: 'google-voided', payment: (pick(googlePayments(w), this.payment) as M.ModelPayment).key };
  }
  model(w: M.ModelWallet, op: Op) {
    return { answer: M.storeRefund(w, op.payment as number) };
  }
  real(u: RealUser, op: Op) {
    return u.googleVoided(op.payment as number);
  }
  toString() {
    return `new GoogleVoided(${this.payment})`;
  }
}

export class PayInvoice extends MoneyCommand {
  constructor(readonly periodHours: number) {
    super();
  }
  applies() {
    return true;
  }
  plan(w: M.ModelWallet): Op {
    return { kind: 'invoice', periodEnd: w.now + hours(this.periodHours) };
  }
  model(w: M.ModelWallet, op: Op) {
    return { answer: M.payInvoice(w, op.periodEnd as number) };
  }
  real(u: RealUser, op: Op, w: M.ModelWallet) {
    return u.payInvoice(((op.periodEnd as number) - w.shift) / 1000);
  }
  toString() {
    return `new PayInvoice(${this.periodHours})`;
  }
}

export class Refund extends MoneyCommand {
  constructor(
    readonly payment: number,
    readonly amountRefundedMinor: number,
  ) {
    super();
  }
  applies(w: M.ModelWallet) {
    return stripePayments(w).length > 0;
  }
  plan(w: M.ModelWallet): Op {
    return { kind: 'refund', payment: (pick(stripePayments(w), this.payment) as M.ModelPayment).key };
  }
  model(w: M.ModelWallet, op: Op) {
    return { answer: M.refund(w, op.payment as number, this.amountRefundedMinor) };
  }
  real(u: RealUser, op: Op) {
    return u.refund(op.payment as number, this.amountRefundedMinor);
  }
  toString() {
    return `new Refund(${this.payment}, ${this.amountRefundedMinor})`;
  }
}

export class Dispute extends MoneyCommand {
  constructor(
    readonly payment: number,
    readonly reinstated: boolean,
  ) {
    super();
  }
  applies(w: M.ModelWallet) {
    return stripePayments(w).length > 0;
  }
  plan(w: M.ModelWallet): Op {
    return { kind: 'dispute', payment: (pick(stripePayments(w), this.payment) as M.ModelPayment).key };
  }
  model(w: M.ModelWallet, op: Op) {
    const payment = op.payment as number;
    return { answer: this.reinstated ? M.disputeReinstated(w, payment) : M.disputeWithdrawn(w, payment) };
  }
  real(u: RealUser, op: Op) {
    return u.dispute(op.payment as number, this.reinstated);
  }
  toString() {
    return `new Dispute(${this.payment}, ${this.reinstated})`;
  }
}

/** The dispute's next step as Stripe orders it: withdrawn first, reinstated (won) once withdrawn. */
export class DisputeNext extends MoneyCommand {
  constructor(readonly payment: number) {
    super();
  }
  applies(w: M.ModelWallet) {
    return stripePayments(w).length > 0;
  }
  plan(w: M.ModelWallet): Op {
    const payment = pick(stripePayments(w), this.payment) as M.ModelPayment;
    return { kind: 'dispute', payment: payment.key, reinstated: payment.dispute !== null };
  }
  model(w: M.ModelWallet, op: Op) {
    const payment = op.payment as number;
    return { answer: op.reinstated ? M.disputeReinstated(w, payment) : M.disputeWithdrawn(w, payment) };
  }
  real(u: RealUser, op: Op) {
    return u.dispute(op.payment as number, op.reinstated as boolean);
  }
  toString() {
    return `new DisputeNext(${this.payment})`;
  }
}

export class Debit extends MoneyCommand {
  override concurrent = true;
  constructor(readonly amount: number) {
    super();
  }
  applies() {
    return true;
  }
  plan(_w: M.ModelWallet, reference: string): Op {
    return { kind: 'debit', reference };
  }
  model(w: M.ModelWallet, op: Op) {
    return { answer: M.debit(w, op.reference as string, this.amount) };
  }
  real(u: RealUser, op: Op) {
    return u.debit(op.reference as string, this.amount);
  }
  toString() {
    return `new Debit(${this.amount})`;
  }
}

export class Hold extends MoneyCommand {
  override concurrent = true;
  constructor(
    readonly amount: number,
    readonly ttlHours: number,
  ) {
    super();
  }
  applies() {
    return true;
  }
  plan(_w: M.ModelWallet, reference: string): Op {
    return { kind: 'hold', reference };
  }
  model(w: M.ModelWallet, op: Op) {
    const placed = M.placeHold(w, op.reference as string, this.amount, hours(this.ttlHours));
    return { answer: { status: placed.status, body: placed.body }, hold: placed.hold };
  }
  real(u: RealUser, op: Op) {
    return u.hold(op.reference as string, this.amount, this.ttlHours * 3600);
  }
  toString() {
    return `new Hold(${this.amount}, ${this.ttlHours})`;
  }
}

export class Capture extends MoneyCommand {
  override concurrent = true;
  constructor(
    readonly hold: number,
    readonly amount: number | undefined,
  ) {
    super();
  }
  applies(w: M.ModelWallet) {
    return w.holds.length > 0;
  }
  plan(w: M.ModelWallet): Op {
    return { kind: 'capture', hold: (pick(w.holds, this.hold) as M.ModelHold).key };
  }
  model(w: M.ModelWallet, op: Op) {
    return { answer: M.captureHold(w, op.hold as number, this.amount) };
  }
  real(u: RealUser, op: Op) {
    return u.capture(op.hold as number, this.amount);
  }
  toString() {
    return `new Capture(${this.hold}, ${this.amount})`;
  }
}

export class Release extends MoneyCommand {
  override concurrent = true;
  constructor(readonly hold: number) {
    super();
  }
  applies(w: M.ModelWallet) {
    return w.holds.length > 0;
  }
  plan(w: M.ModelWallet): Op {
    return { kind: 'release', hold: (pick(w.holds, this.hold) as M.ModelHold).key };
  }
  model(w: M.ModelWallet, op: Op) {
    return { answer: M.releaseHold(w, op.hold as number) };
  }
  real(u: RealUser, op: Op) {
    return u.release(op.hold as number);
  }
  toString() {
    return `new Release(${this.hold})`;
  }
}

export class Void extends MoneyCommand {
  override concurrent = true;
  constructor(readonly lot: number) {
    super();
  }
  applies(w: M.ModelWallet) {
    return w.lots.length > 0;
  }
  plan(w: M.ModelWallet): Op {
    return { kind: 'void', lot: (pick(w.lots, this.lot) as M.ModelLot).key };
  }
  model(w: M.ModelWallet, op: Op) {
    return { answer: M.voidLot(w, op.lot as number) };
  }
  real(u: RealUser, op: Op) {
    return u.void(op.lot as number);
  }
  toString() {
    return `new Void(${this.lot})`;
  }
}

/**
 * The app sets the user's spend limits (`PUT …/limits`): each period a number of tokens, null to
 * remove it (no default in the model's stack), or undefined to leave it; both undefined reads them.
 */
export class SetLimits extends MoneyCommand {
  constructor(
    readonly daily: number | null | undefined,
    readonly monthly: number | null | undefined,
  ) {
    super();
  }
  applies() {
    return true;
  }
  plan(): Op {
    return { kind: 'limits' };
  }
  private get change() {
    return {
      ...(this.daily !== undefined ? { daily: this.daily } : {}),
      ...(this.monthly !== undefined ? { monthly: this.monthly } : {}),
    };
  }
  model(w: M.ModelWallet) {
    return { answer: M.setLimits(w, this.change) };
  }
  real(u: RealUser) {
    return u.setLimits(this.change);
  }
  toString() {
    return `new SetLimits(${this.daily}, ${this.monthly})`;
  }
}

/** Support forgives the debt: `amount` of it, or all of it (null). */
export class Forgive extends MoneyCommand {
  override concurrent = true;
  constructor(readonly amount: number | null) {
    super();
  }
  applies() {
    return true;
  }
  plan(): Op {
    return { kind: 'forgive' };
  }
  model(w: M.ModelWallet) {
    return { answer: M.forgiveDebt(w, this.amount) };
  }
  real(u: RealUser) {
    return u.forgive(this.amount);
  }
  toString() {
    return `new Forgive(${this.amount})`;
  }
}

/** Saves a card (the first time) and turns auto top-up on: `PUT …/auto-topup {tokens_100, threshold, monthlyLimit}`. */
export class EnableAutoTopup extends MoneyCommand {
  constructor(
    readonly threshold: number,
    readonly monthlyLimit: number,
  ) {
    super();
  }
  applies() {
    return true;
  }
  plan(): Op {
    return { kind: 'auto-topup' };
  }
  model(w: M.ModelWallet) {
    return { answer: AT.enableAutoTopup(w, this.threshold, this.monthlyLimit) };
  }
  real(u: RealUser) {
    return u.enableAutoTopup(this.threshold, this.monthlyLimit);
  }
  toString() {
    return `new EnableAutoTopup(${this.threshold}, ${this.monthlyLimit})`;
  }
}

/** How the saved card answers the next off-session charges (the fake Stripe's card). */
export class CardBehaves extends MoneyCommand {
  constructor(readonly card: M.CardBehaviour) {
    super();
  }
  applies(w: M.ModelWallet) {
    return w.autoTopup !== null;
  }
  plan(): Op {
    return { kind: 'card' };
  }
  model(w: M.ModelWallet) {
    return { answer: AT.setCard(w, this.card) };
  }
  real(u: RealUser) {
    return u.setCard(this.card);
  }
  toString() {
    return `new CardBehaves('${this.card}')`;
  }
}

/** The auto-topup worker runs the user's attempt in flight (the charge, then its answer recorded). */
export class ChargeAutoTopup extends MoneyCommand {
  applies(w: M.ModelWallet) {
    return w.autoTopup !== null;
  }
  plan(): Op {
    return { kind: 'charge' };
  }
  model(w: M.ModelWallet) {
    return { answer: AT.chargeAutoTopup(w) };
  }
  real(u: RealUser) {
    return u.chargeAutoTopup();
  }
  toString() {
    return 'new ChargeAutoTopup()';
  }
}

/**
 * The uses the sequences make, by index (so a shrunk sequence reads as a list of numbers): every
 * price shape of the example catalog (per unit, per 1,000 with two meters and its rounding up, per
 * use inside a shared free allowance), zero quantities, and one too dear for most wallets.
 */
export const SPECS: M.UseSpec[] = [
  { feature: 'video', variant: null, quantities: { second: 0 } },
  { feature: 'video', variant: null, quantities: { second: 1 } },
  { feature: 'video', variant: null, quantities: { second: 7 } },
  { feature: 'video', variant: null, quantities: { second: 40 } },
  { feature: 'chat', variant: 'small', quantities: { input: 300, output: 700 } },
  { feature: 'chat', variant: 'large', quantities: { input: 1500, output: 2000 } },
  { feature: 'chat', variant: 'large', quantities: { input: 20000, output: 5000 } },
  { feature: 'chat', variant: 'small', quantities: { input: 0, output: 0 } },
  { feature: 'caption', variant: null, quantities: { use: 1 } },
  { feature: 'summary', variant: null, quantities: { use: 1 } },
  { feature: 'caption', variant: null, quantities: { use: 2 } },
];
const specAt = (index: number) => SPECS[index % SPECS.length] as M.UseSpec;

export class Usage extends MoneyCommand {
  override concurrent = true;
  constructor(readonly spec: number) {
    super();
  }
  applies() {
    return true;
  }
  plan(_w: M.ModelWallet, reference: string): Op {
    return { kind: 'usage', reference, spec: specAt(this.spec) };
  }
  model(w: M.ModelWallet, op: Op) {
    return { answer: M.usage(w, op.reference as string, op.spec as M.UseSpec) };
  }
  real(u: RealUser, op: Op) {
    return u.usage(op.reference as string, op.spec as M.UseSpec);
  }
  toString() {
    return `new Usage(${this.spec})`;
  }
}

/** A usage sent again under its reference: the same body (its first answer, nothing charged) or another (409). */
export class UsageAgain extends MoneyCommand {
  override concurrent = true;
  constructor(
    readonly use: number,
    readonly sameBody: boolean,
  ) {
    super();
  }
  applies(w: M.ModelWallet) {
    return w.uses.some((use) => use.reference !== null);
  }
  plan(w: M.ModelWallet): Op {
    const use = pick(
      w.uses.filter((u) => u.reference !== null),
      this.use,
    ) as M.ModelUse;
    const other = use.spec.feature === 'video' && use.spec.quantities.second === 3 ? 1 : 3;
    const spec = this.sameBody ? use.spec : { feature: 'video', variant: null, quantities: { second: other } };
    return { kind: 'usage', reference: use.reference, spec };
  }
  model(w: M.ModelWallet, op: Op) {
    return { answer: M.usage(w, op.reference as string, op.spec as M.UseSpec) };
  }
  real(u: RealUser, op: Op) {
    return u.usage(op.reference as string, op.spec as M.UseSpec);
  }
  toString() {
    return `new UsageAgain(${this.use}, ${this.sameBody})`;
  }
}

export class PricedHold extends MoneyCommand {
  override concurrent = true;
  constructor(
    readonly spec: number,
    readonly ttlHours: number,
  ) {
    super();
  }
  applies() {
    return true;
  }
  plan(_w: M.ModelWallet, reference: string): Op {
    return { kind: 'priced-hold', reference, spec: specAt(this.spec) };
  }
  model(w: M.ModelWallet, op: Op) {
    const placed = M.placePricedHold(w, op.reference as string, op.spec as M.UseSpec, hours(this.ttlHours));
    return { answer: { status: placed.status, body: placed.body }, hold: placed.hold };
  }
  real(u: RealUser, op: Op) {
    return u.pricedHold(op.reference as string, op.spec as M.UseSpec, this.ttlHours * 3600);
  }
  toString() {
    return `new PricedHold(${this.spec}, ${this.ttlHours})`;
  }
}

/**
 * A capture by the actual quantities: the estimate's, scaled by `tenths`/10 (0: nothing used, 10:
 * the estimate, 100: ten times it), of a hold by estimate when there is one; of an amount hold:
 * quantities it refuses.
 */
export class PricedCapture extends MoneyCommand {
  override concurrent = true;
  constructor(
    readonly hold: number,
    readonly tenths: number,
  ) {
    super();
  }
  applies(w: M.ModelWallet) {
    return w.holds.length > 0;
  }
  plan(w: M.ModelWallet): Op {
    // A hold by estimate when there is one (an amount hold's 400 is also reached by Capture).
    const priced = w.holds.filter((h) => h.use !== null);
    const hold = pick(priced.length > 0 ? priced : w.holds, this.hold) as M.ModelHold;
    const use = hold.use === null ? undefined : w.uses[hold.use];
    const quantities =
      use === undefined
        ? null
        : Object.fromEntries(
            Object.entries(use.spec.quantities).map(([meter, q]) => [meter, Math.floor((q * this.tenths) / 10)]),
          );
    return { kind: 'priced-capture', hold: hold.key, quantities };
  }
  model(w: M.ModelWallet, op: Op) {
    // Of an amount hold the model answers 400 whatever the quantities (after settling lapsed holds, as the lock does).
    return {
      answer: M.capturePricedHold(w, op.hold as number, (op.quantities as Record<string, number> | null) ?? {}),
    };
  }
  real(u: RealUser, op: Op) {
    return u.pricedCapture(op.hold as number, op.quantities as Record<string, number> | null);
  }
  toString() {
    return `new PricedCapture(${this.hold}, ${this.tenths})`;
  }
}

/**
 * Time passes (every user of the sequence sees it: it moves the whole database), then, with
 * `sweep`, the sweeper runs once, as the worker's credit-expiry role does every minute.
 */
export class Advance extends MoneyCommand {
  constructor(
    readonly hours: number,
    readonly sweep = false,
  ) {
    super();
  }
  applies() {
    return true;
  }
  plan(): Op {
    return { kind: 'advance' };
  }
  model(w: M.ModelWallet) {
    M.advance(w, hours(this.hours));
    if (this.sweep) M.sweep(w);
    return { answer: { status: 200, body: {} } };
  }
  async real(u: RealUser) {
    await u.real.advance(hours(this.hours));
    if (this.sweep) await u.real.sweep();
    return { status: 200, json: {} };
  }
  toString() {
    return `new Advance(${this.hours}, ${this.sweep})`;
  }
}

/**
 * Time passes until the next thing expires (the soonest expiry of a lot with tokens left or of an
 * active hold, at least an hour), then the sweeper runs if `sweep`: the instants where expiries
 * meet holds and voids, which fixed steps rarely land between.
 */
export class AdvanceToNextExpiry extends MoneyCommand {
  constructor(readonly sweep: boolean) {
    super();
  }
  applies() {
    return true;
  }
  plan(w: M.ModelWallet): Op {
    return { kind: 'advance', ms: M.untilNextExpiry(w) };
  }
  model(w: M.ModelWallet, op: Op) {
    M.advance(w, op.ms as number);
    if (this.sweep) M.sweep(w);
    return { answer: { status: 200, body: {} } };
  }
  async real(u: RealUser, op: Op) {
    await u.real.advance(op.ms as number);
    if (this.sweep) await u.real.sweep();
    return { status: 200, json: {} };
  }
  toString() {
    return `new AdvanceToNextExpiry(${this.sweep})`;
  }
}

export class Sweep extends MoneyCommand {
  applies() {
    return true;
  }
  plan(): Op {
    return { kind: 'sweep' };
  }
  model(w: M.ModelWallet) {
    M.sweep(w);
    return { answer: { status: 200, body: {} } };
  }
  async real(u: RealUser) {
    await u.real.sweep();
    return { status: 200, json: {} };
  }
  toString() {
    return 'new Sweep()';
  }
}

export class Divergence extends Error {}

/**
 * Deep equality of plain JSON values. Answers parsed by fetch are built in Node's own realm, not
 * in Jest's sandbox, so their prototypes differ from the model's objects: compare them re-parsed.
 */
export const same = (a: unknown, b: unknown) =>
  isDeepStrictEqual(JSON.parse(JSON.stringify(a) ?? 'null'), JSON.parse(JSON.stringify(b) ?? 'null'));

/** Compares what the system did with what the model says, after one command of one user. */
export async function compare(
  what: string,
  user: { w: M.ModelWallet; real: RealUser },
  expected: M.Answer | null,
  actual: { status: number; json: Json } | null,
): Promise<void> {
  const problems: string[] = await user.real.mapLots(user.w);
  if (expected && actual) {
    const projected = user.real.project(actual, expected);
    if (!same(projected, expected)) {
      problems.push(`answer: system ${JSON.stringify(projected)}, model ${JSON.stringify(expected)}`);
    }
  }
  const wallet = await user.real.wallet();
  const view = M.walletView(user.w);
  if (!same(wallet, view)) {
    problems.push(`wallet: system ${JSON.stringify(wallet)}\n        model  ${JSON.stringify(view)}`);
  }
  const autoTopup = await user.real.autoTopupView();
  const autoTopupModel = AT.autoTopupView(user.w);
  if (!same(autoTopup, autoTopupModel)) {
    problems.push(`auto top-up: system ${JSON.stringify(autoTopup)}\n        model  ${JSON.stringify(autoTopupModel)}`);
  }
  if (problems.length > 0)
    throw new Divergence(`after ${what} (user ${user.real.userId}):\n  ${problems.join('\n  ')}`);
}

/** One command against one user, sequentially: model, system, compare. */
export async function runOne(world: World, command: MoneyCommand): Promise<void> {
  const user = world.users[command.user];
  if (!user) throw new Error('no such user');
  const op = command.plan(user.w, `${user.real.userId}.${user.next++}`);
  const before = structuredClone(user.w);
  const outcome = command.model(user.w, op);
  // Advancing time moves every user's clock (the model of each), as it moves the whole database.
  // Time and the sweeper act on the whole database: every user of the sequence sees them.
  for (const other of world.users) {
    if (other === user) continue;
    if (command instanceof Advance) M.advance(other.w, hours(command.hours));
    if (command instanceof AdvanceToNextExpiry) M.advance(other.w, op.ms as number);
    const sweeps = command instanceof Advance || command instanceof AdvanceToNextExpiry ? command.sweep : false;
    if (command instanceof Sweep || sweeps) M.sweep(other.w);
  }
  const actual = await command.real(user.real, op, before);
  if (outcome.hold !== undefined && actual.json?.id) user.real.holdIds.set(outcome.hold, actual.json.id);
  world.steps += 1;
  const targets = command instanceof Advance || command instanceof Sweep ? world.users : [user];
  for (const target of targets) {
    await compare(command.toString(), target, target === user ? outcome.answer : null, target === user ? actual : null);
  }
}

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

/**
 * Two to four commands on one user sent at once. The wallet lock serializes them, so what the
 * system answered and the state it ends in must equal SOME sequential order of the batch applied
 * to the model: every order is tried (at most 24).
 */
export class Batch extends MoneyCommand {
  constructor(readonly commands: MoneyCommand[]) {
    super();
  }
  applies(w: M.ModelWallet) {
    return this.commands.every((c) => c.applies(w));
  }
  override async run(world: World): Promise<void> {
    world.executed.push(this);
    await runBatch(world, this);
  }
  plan(): Op {
    return { kind: 'batch' };
  }
  model(): Outcome {
    throw new Error('a batch runs through runBatch');
  }
  real(): Promise<{ status: number; json: Json }> {
    throw new Error('a batch runs through runBatch');
  }
  toString() {
    return `new Batch(${this.user}, [${this.commands.map(String).join(', ')}])`;
  }
}

/**
 * Batches of several users sent at once (the concurrent mode): the api's debit batcher puts
 * debits of distinct users arriving together in one transaction (docs/holds.md "Debits"), so
 * each user's calls must still be explained by some sequential order of that user's own, whatever
 * the other users' calls shared with them.
 */
export class Together extends MoneyCommand {
  constructor(readonly batches: Batch[]) {
    super();
  }
  /**
   * It runs the users' batches whose every command applies (a capture needs a hold of its user),
   * when at least two do: a batch of holds and captures is not lost to one user without a hold.
   */
  override check(world: World) {
    return this.applying(world).length >= 2;
  }
  applies(w: M.ModelWallet) {
    return this.batches.every((batch) => batch.applies(w));
  }
  private applying(world: World) {
    return this.batches.filter((batch) => batch.check(world));
  }
  override async run(world: World): Promise<void> {
    world.executed.push(this);
    const batches = this.applying(world);
    const sent = await Promise.all(batches.map((batch) => sendBatch(world, batch)));
    for (const [index, batch] of batches.entries())
      await checkBatch(world, batch, sent[index] as Awaited<ReturnType<typeof sendBatch>>);
  }
  plan(): Op {
    return { kind: 'batch' };
  }
  model(): Outcome {
    throw new Error('batches run through sendBatch and checkBatch');
  }
  real(): Promise<{ status: number; json: Json }> {
    throw new Error('batches run through sendBatch and checkBatch');
  }
  toString() {
    return `new Together([${this.batches.map(String).join(', ')}])`;
  }
}

export async function runBatch(world: World, batch: Batch): Promise<void> {
  await checkBatch(world, batch, await sendBatch(world, batch));
}

/** The batch's calls sent at once: what they planned, the wallet before, and the system's answers. */
async function sendBatch(world: World, batch: Batch) {
  const user = world.users[batch.user];
  if (!user) throw new Error('no such user');
  const planned = batch.commands.map((command) => ({
    command,
    op: command.plan(user.w, `${user.real.userId}.${user.next++}`),
  }));
  const before = structuredClone(user.w);
  const actuals = await Promise.all(planned.map(({ command, op }) => command.real(user.real, op, before)));
  world.steps += batch.commands.length;
  return { planned, before, actuals };
}

/** Some sequential order of the batch's commands explains the answers and the wallet, or a divergence. */
async function checkBatch(
  world: World,
  batch: Batch,
  { planned, before, actuals }: Awaited<ReturnType<typeof sendBatch>>,
): Promise<void> {
  const user = world.users[batch.user];
  if (!user) throw new Error('no such user');
  const answer = await user.real.walletAnswer();
  const autoTopup = await user.real.autoTopupView();
  const tried: string[] = [];
  for (const order of permutations(planned.map((_, i) => i))) {
    const w = structuredClone(before);
    const outcomes: Outcome[] = [];
    for (const i of order) {
      const item = planned[i] as (typeof planned)[number];
      outcomes[i] = item.command.model(w, item.op);
    }
    // Holds placed in this order get the model keys of this order: pair them with the answers first.
    const holdIds = new Map(user.real.holdIds);
    for (const [i, outcome] of outcomes.entries()) {
      const id = actuals[i]?.json?.id;
      if (outcome.hold !== undefined && id) holdIds.set(outcome.hold, id);
    }
    // Pair the lots as this order made them, then read the answers and the wallet through it.
    const lotProblems = await user.real.mapLots(w);
    const answersMatch = outcomes.every((outcome, i) =>
      same(user.real.project(actuals[i] as { status: number; json: Json }, outcome.answer), outcome.answer),
    );
    if (
      answersMatch &&
      lotProblems.length === 0 &&
      same(user.real.walletView(answer), M.walletView(w)) &&
      same(autoTopup, AT.autoTopupView(w))
    ) {
      user.w = w;
      for (const [key, id] of holdIds) user.real.holdIds.set(key, id);
      return;
    }
    tried.push(`order ${order.join(',')}: model ${JSON.stringify(outcomes.map((o) => o.answer))}`);
  }
  throw new Divergence(
    `after ${batch} (user ${user.real.userId}): no sequential order explains it\n  system answers ${JSON.stringify(
      actuals.map((a) => ({ status: a.status, json: a.json })),
    )}\n  system wallet ${JSON.stringify(answer)}\n  ${tried.join('\n  ')}`,
  );
}
