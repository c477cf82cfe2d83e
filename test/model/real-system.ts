import { randomUUID } from 'node:crypto';
import { type AutoTopupAttemptRow, runAutoTopupAttempt } from '@tally/billing-core';
import { sql } from 'kysely';
import { type AppleNotificationSpec, appleVerifierFor, deliverApple } from '../support/apple-notifications';
import { ApplePki } from '../support/apple-signing';
import { FakeGooglePlay } from '../support/fakes/fake-google-play';
import type { FakeStripe } from '../support/fakes/fake-stripe';
import { oneTimeProduct, voidedPurchase } from '../support/fakes/google-play-keys';
import { fakePackageName, googlePlayActions, pushAudience } from '../support/google-play';
import { type Json, startStackWithFakeStripe, type TestStack } from '../support/stack';
import {
  stripeDispute,
  stripeEventBody,
  stripeId,
  stripeInvoice,
  stripePackIntent,
  stripeRefundedCharge,
  stripeSubscription,
} from '../support/stripe-events';
import type { Answer, CardBehaviour, ModelWallet, Origin, UseSpec } from './money-model';

/** One meter as `quantity`, several as `quantities`: as an app sends them. */
const quantityBody = (quantities: Record<string, number>) => {
  const meters = Object.entries(quantities);
  return meters.length === 1 ? { quantity: (meters[0] as [string, number])[1] } : { quantities };
};
const specBody = (spec: UseSpec) => ({
  feature: spec.feature,
  ...(spec.variant === null ? {} : { variant: spec.variant }),
  ...quantityBody(spec.quantities),
});

/**
 * The real Tally the model is checked against: the in-process stack of test/support/stack.ts
 * (ingest and api over HTTP, a worker for the inbox, the credit-expiry role's sweeper run by hand,
 * a fake Stripe over HTTP for the re-reads), on one database for the whole run. Each sequence
 * plays one or more users of its own (fresh ids), so sequences never see each other's money.
 */
export class RealSystem {
  private constructor(
    readonly stack: TestStack,
    readonly fake: FakeStripe,
    /** The test CA the App Store notifications are signed with (ingest trusts its root). */
    readonly applePki: ApplePki,
    /** Google's side: the Play Developer API and the OIDC certificates ingest checks pushes against. */
    readonly googlePlay: FakeGooglePlay,
    private readonly sweeper: () => Promise<void>,
  ) {}

  static async start(): Promise<RealSystem> {
    const applePki = ApplePki.create();
    const googlePlay = new FakeGooglePlay();
    await googlePlay.listen();
    const { stack, fake } = await startStackWithFakeStripe({
      // One spend transaction open at a time (SPEND_BATCH_TRANSACTIONS=1): the calls a Together
      // sends at once after the first all go in one shared transaction, so the batch path (a
      // unit's first spends of several users, then their further ones) is what the concurrent
      // mode checks, not the path of a spend alone.
      spendBatch: { maxItems: 32, maxTransactions: 1 },
      appleNotifications: appleVerifierFor(applePki),
      ports: { googlePlay: googlePlay.api() },
      googlePlayPush: {
        packageName: fakePackageName,
        audience: pushAudience,
        serviceAccountEmail: googlePlay.keys.pushServiceAccount,
        certsUrl: googlePlay.certsUrl,
      },
    });
    stack.stopAlso(async () => applePki.dispose());
    stack.stopAlso(() => googlePlay.stop());
    stack.startWorker({ concurrency: 4, roles: ['inbox', 'relay'] });
    const expiry = stack.startWorker({ roles: ['credit-expiry'] });
    return new RealSystem(stack, fake, applePki, googlePlay, async () => {
      const loop = expiry.loops['credit-expiry'];
      if (!loop) throw new Error('the credit-expiry role has no loop');
      await loop.runOnce();
    });
  }

  stop() {
    return this.stack.stop();
  }

  /** The credit-expiry role's pass, as the worker runs it every CREDIT_EXPIRY_INTERVAL_MS. */
  sweep() {
    return this.sweeper();
  }

  /**
   * "Time passes by `ms`": every stored time of the database moves back by `ms`, so the database's
   * now() and the processes' clocks (both the real time) see that much more time gone by since
   * anything was written. Test-only SQL over every timestamp column of every table; triggers are
   * off for its transaction (session_replication_role) because the ledger refuses updates, and
   * the shift changes no amount. No production code path can move time.
   */
  async advance(ms: number): Promise<void> {
    const columns = await sql<{ table_name: string; column_name: string }>`
      SELECT table_name, column_name FROM information_schema.columns
       WHERE table_schema = 'public' AND data_type IN ('timestamp with time zone', 'timestamp without time zone')
         AND table_name IN (SELECT table_name FROM information_schema.tables
                             WHERE table_schema = 'public' AND table_type = 'BASE TABLE')
       ORDER BY table_name, column_name`.execute(this.stack.db);
    const byTable = new Map<string, string[]>();
    for (const { table_name, column_name } of columns.rows) {
      byTable.set(table_name, [...(byTable.get(table_name) ?? []), column_name]);
    }
    await this.stack.db.transaction().execute(async (trx) => {
      await sql`SET LOCAL session_replication_role = replica`.execute(trx);
      for (const [table, names] of byTable) {
        const sets = names.map((name) => `"${name}" = "${name}" - ${ms} * interval '1 millisecond'`).join(', ');
        await sql.raw(`UPDATE "${table}" SET ${sets}`).execute(trx);
      }
      // The UTC day (and allowance period) a use fell in is stored as a date or text beside its
      // created_at: moved with it, so a free allowance resets when the moved time crosses a day.
      await sql`
        UPDATE feature_uses
           SET usage_day = (created_at AT TIME ZONE 'UTC')::date,
               allowance_period = CASE length(allowance_period)
                                    WHEN 10 THEN to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')
                                    WHEN 7 THEN to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM')
                                  END`.execute(trx);
      await sql`UPDATE studio_requests SET usage_day = (created_at AT TIME ZONE 'UTC')::date`.execute(trx);
      // The spend limits' counters (spend_days) are sums per UTC day of the entries they count:
      // made again from those entries' moved created_at, so a limit resets when the moved time
      // crosses a day or a month (a studio debit given back no longer counts).
      await sql`DELETE FROM spend_days`.execute(trx);
      await sql`
        INSERT INTO spend_days (user_id, day, spent)
        SELECT e.user_id, (e.created_at AT TIME ZONE 'UTC')::date, sum(-e.amount)
          FROM ledger_entries e
         WHERE e.reference LIKE 'debit:%' OR e.reference LIKE 'usage:%' OR e.reference LIKE 'hold:%:capture'
            OR e.reference LIKE 'hold:%:excess'
            OR (e.reference LIKE 'studio:%:debit' AND NOT EXISTS (
                  SELECT 1 FROM ledger_entries r WHERE r.reference = left(e.reference, -length(':debit')) || ':refund'))
         GROUP BY 1, 2`.execute(trx);
    });
  }

  /**
   * The auto-topup role's run of one user's due attempts (runAutoTopupAttempt, the loop's body),
   * claimed as the loop claims (tries + 1, leased): per user, so one user's command never charges
   * another user's attempt in a sequence of several.
   */
  async chargeAutoTopups(userId: string): Promise<void> {
    const claimed = await sql<AutoTopupAttemptRow>`
      UPDATE auto_topup_attempts
         SET tries = tries + 1, locked_until = now() + interval '1 minute',
             first_tried_at = coalesce(first_tried_at, now()), updated_at = now()
       WHERE user_id = ${userId} AND status IN ('pending', 'processing') AND next_attempt_at <= now()
      RETURNING *`.execute(this.stack.db);
    const deps = {
      db: this.stack.db,
      outbox: this.stack.outbox,
      catalog: this.stack.catalog,
      stripe: this.stack.ports.stripe,
      leaseMs: 60_000,
      backoff: { baseDelayMs: 1_000, maxDelayMs: 1_000 },
      resolveWithinMs: 23 * 3600_000,
    };
    for (const attempt of claimed.rows) await runAutoTopupAttempt(deps, attempt);
  }

  async verifyLedger(): Promise<Json> {
    const response = await this.stack.apiRequest('/admin/ledger/verify');
    return response.json();
  }
}

interface PaymentIds {
  paymentIntent: string;
  charge: string;
  dispute: string;
  /** An App Store pack's transaction id (its lot's source is `apple:transaction:{id}`). */
  appleTransaction?: string;
  /** A Google Play pack's order id and purchase token (its lot's source is `google:order:{orderId}`). */
  googleOrder?: { orderId: string; token: string };
  /** When Apple revoked it, in the model's frame (a redelivery names the same instant as the system now stores it). */
  appleRevokedAt?: number;
}

/** One user of one sequence: the real ids behind the model's keys. */
export class RealUser {
  readonly userId = `model_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  /** The real lot id of each model lot key. */
  readonly lotIds = new Map<number, number>();
  readonly holdIds = new Map<number, string>();
  readonly payments: PaymentIds[] = [];
  readonly invoices: string[] = [];
  private subscription: { id: string; customer: string } | null = null;

  constructor(readonly real: RealSystem) {}

  private get stack() {
    return this.real.stack;
  }

  private async answerOf(response: Response): Promise<{ status: number; json: Json }> {
    const text = await response.text();
    return { status: response.status, json: text ? JSON.parse(text) : null };
  }

  post(path: string, body?: unknown) {
    return this.stack
      .apiRequest(path, { method: 'POST', ...(body !== undefined ? { body } : {}) })
      .then((r) => this.answerOf(r));
  }

  grant(reference: string, amount: number, expiresAt: string | null, admin: boolean, settlesDebt: boolean) {
    const path = admin ? `/admin/users/${this.userId}/grants` : `/v1/users/${this.userId}/grants`;
    return this.post(path, {
      reference,
      amount,
      ...(expiresAt ? { expiresAt } : {}),
      ...(settlesDebt ? { settlesDebt } : {}),
    });
  }

  debit(reference: string, amount: number) {
    return this.post(`/v1/users/${this.userId}/debits`, { reference, amount });
  }

  hold(reference: string, amount: number, expiresInSeconds: number) {
    return this.post(`/v1/users/${this.userId}/holds`, { reference, amount, expiresInSeconds });
  }

  capture(holdKey: number, amount: number | undefined) {
    return this.post(
      `/v1/users/${this.userId}/holds/${this.holdId(holdKey)}/capture`,
      amount === undefined ? {} : { amount },
    );
  }

  /** `PUT …/limits` with the fields given (absent: unchanged). */
  setLimits(change: { daily?: number | null; monthly?: number | null }) {
    return this.stack
      .apiRequest(`/v1/users/${this.userId}/limits`, { method: 'PUT', body: change })
      .then((r) => this.answerOf(r));
  }

  forgive(amount: number | null) {
    return this.post(`/admin/users/${this.userId}/debt/forgive`, {
      ...(amount === null ? {} : { amount }),
      note: 'model check',
    });
  }

  usage(reference: string, spec: UseSpec) {
    return this.post(`/v1/users/${this.userId}/usage`, { reference, ...specBody(spec) });
  }

  pricedHold(reference: string, spec: UseSpec, expiresInSeconds: number) {
    return this.post(`/v1/users/${this.userId}/holds`, { reference, expiresInSeconds, ...specBody(spec) });
  }

  /** A capture by quantities (`null`: of an amount hold, which refuses them). */
  pricedCapture(holdKey: number, quantities: Record<string, number> | null) {
    return this.post(
      `/v1/users/${this.userId}/holds/${this.holdId(holdKey)}/capture`,
      quantities === null ? { quantity: 1 } : quantityBody(quantities),
    );
  }

  release(holdKey: number) {
    return this.post(`/v1/users/${this.userId}/holds/${this.holdId(holdKey)}/release`);
  }

  void(lotKey: number) {
    const lotId = this.lotIds.get(lotKey);
    if (lotId === undefined) throw new Error(`no real lot for model lot ${lotKey}`);
    return this.post(`/admin/users/${this.userId}/lots/${lotId}/void`);
  }

  private holdId(key: number) {
    const id = this.holdIds.get(key);
    if (!id) throw new Error(`no real hold for model hold ${key}`);
    return id;
  }

  private async deliver(type: string, object: Record<string, unknown>) {
    const eventId = await this.stack.deliverStripe(stripeEventBody(type, object));
    const row = await this.stack.finishedInboxRow('stripe', eventId);
    return { status: 200, json: { outcome: row.outcome_code, status: row.status } };
  }

  async payPack() {
    const ids = { paymentIntent: stripeId('pi'), charge: stripeId('ch'), dispute: stripeId('dp') };
    this.payments.push(ids);
    return this.deliver(
      'payment_intent.succeeded',
      stripePackIntent({ id: ids.paymentIntent, userId: this.userId, customer: this.customer(stripeId('cus')) }),
    );
  }

  /** A customer the events name, known to the fake Stripe as it would be to Stripe (auto top-up's setup reuses it). */
  private customer(id: string): string {
    this.real.fake.customers.set(id, { id, object: 'customer', metadata: { user_id: this.userId } });
    return id;
  }

  /** A signed App Store `ONE_TIME_CHARGE` of the example pack for this user's appAccountToken. */
  async payApplePack() {
    if (this.appleToken === null) {
      const accounts = await this.stack.apiRequest(`/v1/users/${this.userId}/store-accounts`);
      this.appleToken = String(((await accounts.json()) as Json).appleAppAccountToken);
    }
    const transactionId = `${Date.now()}${randomUUID().replaceAll('-', '').slice(0, 8).replace(/[a-f]/g, '7')}`;
    this.payments.push({ paymentIntent: '', charge: '', dispute: '', appleTransaction: transactionId });
    return this.deliverApple({
      type: 'ONE_TIME_CHARGE',
      transaction: { transactionId, appAccountToken: this.appleToken },
    });
  }

  /**
   * A signed App Store `REFUND` of that transaction. One revocation per pack: again, it is a
   * redelivery, naming the same instant, which the system stores moved back by every advance since.
   */
  appleRefund(payment: number, w: ModelWallet) {
    const ids = this.paymentIds(payment);
    if (!ids.appleTransaction) throw new Error(`model payment ${payment} is not an App Store pack`);
    ids.appleRevokedAt ??= w.now;
    return this.deliverApple({
      type: 'REFUND',
      transaction: {
        transactionId: ids.appleTransaction,
        appAccountToken: this.appleToken,
        revocationDate: ids.appleRevokedAt - w.shift,
        revocationReason: 0,
      },
    });
  }

  private appleToken: string | null = null;

  /** A Play purchase of tokens_100 for this user's obfuscated account id, then its PURCHASED push. */
  async payGooglePack() {
    const play = googlePlayActions(this.stack, this.real.googlePlay);
    const orderId = `GPA.${randomUUID().slice(0, 4)}-${randomUUID().slice(0, 8)}`;
    const token = `gtoken-${randomUUID()}`;
    play.setPurchase(token, { orderId, accountId: await play.accountOf(this.userId) });
    this.payments.push({ paymentIntent: '', charge: '', dispute: '', googleOrder: { orderId, token } });
    const row = await play.deliver(oneTimeProduct(fakePackageName, 'tokens_100', token));
    return { status: 200, json: { outcome: row.outcome_code, status: row.status } };
  }

  /** Its voidedPurchaseNotification pushed (again: a redelivery of the same void). */
  async googleVoided(payment: number) {
    const order = this.paymentIds(payment).googleOrder;
    if (!order) throw new Error(`model payment ${payment} is not a Google Play pack`);
    const row = await googlePlayActions(this.stack, this.real.googlePlay).deliver(
      voidedPurchase(fakePackageName, order.token, order.orderId),
    );
    return { status: 200, json: { outcome: row.outcome_code, status: row.status } };
  }

  private async deliverApple(spec: AppleNotificationSpec) {
    const uuid = await deliverApple(this.stack, this.real.applePki, spec);
    const row = await this.stack.finishedInboxRow('apple', uuid);
    return { status: 200, json: { outcome: row.outcome_code, status: row.status } };
  }

  refund(payment: number, amountRefunded: number) {
    const ids = this.paymentIds(payment);
    return this.deliver(
      'charge.refunded',
      stripeRefundedCharge({ id: ids.charge, paymentIntent: ids.paymentIntent, amount: 499, amountRefunded }),
    );
  }

  dispute(payment: number, reinstated: boolean) {
    const ids = this.paymentIds(payment);
    const dispute = stripeDispute({
      id: ids.dispute,
      charge: ids.charge,
      paymentIntent: ids.paymentIntent,
      amount: 499,
      withdrawn: true,
      reinstated,
    });
    this.real.fake.putDispute(dispute);
    return this.deliver(reinstated ? 'charge.dispute.funds_reinstated' : 'charge.dispute.funds_withdrawn', dispute);
  }

  private paymentIds(key: number) {
    const ids = this.payments[key];
    if (!ids) throw new Error(`no real payment for model payment ${key}`);
    return ids;
  }

  /** The saved card's payment method (auto top-up), once saved. */
  private card: string | null = null;

  /** Saves a card the first time (setup, Stripe.js's part played by the fake, the webhook), then `PUT …/auto-topup`. */
  async enableAutoTopup(threshold: number, monthlyLimit: number) {
    if (this.card === null) {
      const setup = await this.post(`/v1/users/${this.userId}/payment-methods/setup`);
      if (setup.status !== 201) throw new Error(`setup answered ${setup.status}`);
      const intent = this.real.fake.completeSetupIntent(String(setup.json.setupIntentId), 'succeeds');
      const saved = await this.deliver('setup_intent.succeeded', intent);
      if (saved.json.outcome !== 'payment_method_saved') throw new Error(`card not saved: ${JSON.stringify(saved)}`);
      this.card = String(intent.payment_method);
    }
    return this.stack
      .apiRequest(`/v1/users/${this.userId}/auto-topup`, {
        method: 'PUT',
        body: { packId: 'tokens_100', threshold, monthlyLimit, enabled: true },
      })
      .then((r) => this.answerOf(r));
  }

  async setCard(card: CardBehaviour) {
    if (this.card !== null) this.real.fake.setCardBehaviour(this.card, card);
    return { status: 200, json: {} };
  }

  /** The worker's run of this user's attempt in flight; a paid one becomes the next payment (refunds, disputes). */
  async chargeAutoTopup() {
    await this.real.chargeAutoTopups(this.userId);
    const paid = await this.stack.db
      .selectFrom('auto_topup_attempts')
      .select('payment_intent_id')
      .where('user_id', '=', this.userId)
      .where('status', '=', 'succeeded')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    for (const { payment_intent_id: paymentIntent } of paid) {
      if (paymentIntent === null || this.payments.some((ids) => ids.paymentIntent === paymentIntent)) continue;
      const charge = String(this.real.fake.paymentIntents.get(paymentIntent)?.latest_charge);
      this.payments.push({ paymentIntent, charge, dispute: stripeId('dp') });
    }
    return { status: 200, json: {} };
  }

  /** The auto top-up as the api and the attempts show it, in the model's words (null: never enabled). */
  async autoTopupView() {
    if (this.card === null) return null;
    const view = (await (await this.stack.apiRequest(`/v1/users/${this.userId}/auto-topup`)).json()) as Json;
    const attempts = await this.stack.db
      .selectFrom('auto_topup_attempts')
      .select('status')
      .where('user_id', '=', this.userId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return {
      enabled: view.enabled,
      threshold: view.threshold,
      monthlyLimit: view.monthlyLimit,
      failuresInARow: view.failuresInARow,
      disabledReason: view.disabledReason,
      thisMonth: view.thisMonth,
      attempts: attempts.map((a) => (a.status === 'processing' ? 'pending' : a.status)),
    };
  }

  /** A paid invoice of `price_premium_monthly_rollover` whose period ends at `periodEnd` (unix seconds). */
  async payInvoice(periodEnd: number) {
    const priceId = 'price_premium_monthly_rollover';
    if (!this.subscription) {
      this.subscription = { id: stripeId('sub'), customer: this.customer(stripeId('cus')) };
      const { id, customer } = this.subscription;
      this.real.fake.putSubscription(stripeSubscription({ id, customer, priceId, userId: this.userId, periodEnd }));
      const created = await this.deliver('customer.subscription.created', { id, object: 'subscription', customer });
      if (created.json.status !== 'processed') throw new Error(`subscription not saved: ${JSON.stringify(created)}`);
    }
    const { id: subscription, customer } = this.subscription;
    const invoiceId = stripeId('in');
    this.invoices.push(invoiceId);
    return this.deliver(
      'invoice.paid',
      stripeInvoice({
        id: invoiceId,
        subscription,
        customer,
        priceId,
        amountPaid: 999,
        periodEnd,
        billingReason: this.invoices.length === 1 ? 'subscription_create' : 'subscription_cycle',
      }),
    );
  }

  /** The source a model lot's origin has in the real system. */
  sourceOf(origin: Origin): string {
    switch (origin.kind) {
      case 'grant':
        return `grant:${origin.reference}`;
      case 'admin-grant':
        return `admin:grant:${origin.reference}`;
      case 'payment': {
        const ids = this.paymentIds(origin.payment);
        if (ids.appleTransaction) return `apple:transaction:${ids.appleTransaction}`;
        if (ids.googleOrder) return `google:order:${ids.googleOrder.orderId}`;
        return `stripe:payment:${ids.paymentIntent}`;
      }
      case 'invoice':
        return `stripe:invoice:${this.invoices[origin.invoice]}`;
      case 'rollover':
        return `lot:${this.lotIds.get(origin.of)}:rollover`;
      case 'give-back':
        return `stripe:dispute:${this.paymentIds(origin.payment).dispute}:reinstated`;
    }
  }

  /**
   * Pairs the real lots with the model's (both in creation order) and checks each pair's source
   * and category: a lot the system made that the model did not (or the other way) is a divergence.
   */
  async mapLots(model: ModelWallet): Promise<string[]> {
    const rows = await this.stack.db
      .selectFrom('credit_lots')
      .select(['id', 'category', 'source'])
      .where('user_id', '=', this.userId)
      .orderBy('id')
      .execute();
    const lots = [...model.lots].sort((a, b) => a.key - b.key);
    const problems: string[] = [];
    for (const [index, row] of rows.entries()) {
      const lot = lots[index];
      if (!lot) {
        problems.push(`the system has a lot the model has not: ${row.category} ${row.source}`);
        continue;
      }
      this.lotIds.set(lot.key, Number(row.id));
      const source = this.sourceOf(lot.origin);
      if (row.source !== source || row.category !== lot.category) {
        problems.push(`lot ${lot.key}: system ${row.category} ${row.source}, model ${lot.category} ${source}`);
      }
    }
    for (const lot of lots.slice(rows.length)) {
      problems.push(`the model has a lot the system has not: ${lot.category} ${this.sourceOf(lot.origin)}`);
    }
    return problems;
  }

  lotKeyOf(id: number): number | string {
    for (const [key, realId] of this.lotIds) if (realId === id) return key;
    return `real:${id}`;
  }

  /** The wallet as the api answers it, in the model's words (lot ids as model keys). */
  async wallet() {
    return this.walletView(await this.walletAnswer());
  }

  async walletAnswer(): Promise<Json> {
    const response = await this.stack.apiRequest(`/v1/users/${this.userId}/wallet`);
    return response.json();
  }

  /** A wallet answer with the lots named by the model's keys (as paired by the last mapLots). */
  walletView(body: Json) {
    return {
      balance: body.balance,
      held: body.held,
      available: body.available,
      debt: body.debt,
      lots: (body.lots as Json[]).map((lot) => ({
        lot: this.lotKeyOf(lot.id),
        category: lot.category,
        amount: lot.amount,
        remaining: lot.remaining,
        held: lot.held,
        expiresAt: lot.expiresAt,
      })),
    };
  }

  /** A real answer reduced to the fields the model's answer names (lot ids as model keys). */
  project(real: { status: number; json: Json }, expected: Answer): Answer {
    const body: Record<string, unknown> = {};
    const json = real.json ?? {};
    for (const key of Object.keys(expected.body)) {
      if (key === 'code') body.code = json.error?.code;
      else if (key === 'lot') body.lot = this.lotKeyOf(json.lotId);
      else if (key === 'draws')
        body.draws = (json.draws as Json[] | undefined)
          ?.map((d) => ({ lot: this.lotKeyOf(d.lotId), amount: d.amount }))
          .sort((a, b) => String(a.lot).localeCompare(String(b.lot), 'en', { numeric: true }));
      else body[key] = json[key];
    }
    return { status: real.status, body };
  }
}
