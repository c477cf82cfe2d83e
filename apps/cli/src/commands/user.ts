import { findUserSupportView, type UserSupportView } from '@tally/billing-core';
import { baseEnvSchema, parseEnv } from '@tally/platform';
import { withDatabase } from './unreachable-server';

/** Plain-text table: a header row, then one row per item, columns padded to their widest cell. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

const iso = (date: Date | null) => (date === null ? '-' : date.toISOString());
/** A text on one line of at most `max` characters (cut with …); null as empty. */
export const oneLine = (text: string | null, max = 80) => {
  if (text === null) return '';
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** The subscription part: the combined answer, each source, and the history table. */
function formatSubscription(view: UserSupportView): string[] {
  const subscription = view.subscription;
  if (subscription === null) return ['subscription: none'];
  const out: string[] = [];
  const current = subscription.current;
  out.push(
    current === null
      ? 'subscription: none current'
      : `subscription: ${current.status} ${current.planId ?? '-'} from ${current.source} (store ${current.store ?? '-'}, expires ${iso(current.expiresAt)}, auto-renew ${current.autoRenew ? 'yes' : 'no'})`,
  );
  out.push(
    formatTable(
      ['SOURCE', 'ID', 'STATUS', 'PLAN', 'EXPIRES / PERIOD END', 'AUTO-RENEW / CANCEL AT END', 'UPDATED'],
      [
        ...(subscription.revenuecat
          ? [
              [
                'revenuecat',
                subscription.revenuecat.productId ?? '-',
                subscription.revenuecat.status,
                subscription.revenuecat.planId ?? '-',
                iso(subscription.revenuecat.expiresAt),
                subscription.revenuecat.autoRenew ? 'auto-renew' : 'no auto-renew',
                iso(subscription.revenuecat.updatedAt),
              ],
            ]
          : []),
        ...subscription.stripe.map((stripe) => [
          'stripe',
          stripe.subscriptionId,
          stripe.status,
          stripe.planId ?? '-',
          iso(stripe.currentPeriodEnd),
          stripe.cancelAtPeriodEnd ? 'cancels at period end' : 'renews',
          iso(stripe.updatedAt),
        ]),
      ],
    ),
  );
  out.push('', `subscription history (${subscription.history.length} of ${subscription.historyTotal}, newest first)`);
  out.push(
    formatTable(
      ['ID', 'SOURCE', 'CHANGE', 'STATUS', 'PLAN', 'EXPIRES', 'CAUSE', 'CREATED'],
      subscription.history.map((row) => [
        String(row.id),
        row.source,
        row.change,
        `${row.fromStatus ?? '-'} -> ${row.toStatus}`,
        `${row.fromPlanId ?? '-'} -> ${row.toPlanId ?? '-'}`,
        iso(row.toExpiresAt),
        row.cause === 'inbox_event' ? `event ${row.inboxEventId}` : `sync ${row.requestId}`,
        iso(row.createdAt),
      ]),
    ),
  );
  return out;
}

/** The support view as sections of plain-text tables. */
export function formatSupportView(view: UserSupportView): string {
  const out: string[] = [];
  out.push(
    view.canonicalUserId === view.userId
      ? `user ${view.userId}`
      : `user ${view.userId} (linked to canonical user ${view.canonicalUserId})`,
  );
  out.push(
    `wallet balance ${view.wallet.balance}, held ${view.wallet.held}, available ${view.wallet.available}, debt ${view.wallet.debt}; ledger sum ${view.ledger.sum} over ${view.ledger.total} entries${
      view.ledger.matchesBalance ? '' : '  MISMATCH: the balance differs from the ledger sum'
    }`,
  );
  out.push('', `lots (${view.wallet.lots.length} with tokens left, in the order a debit draws them)`);
  out.push(
    formatTable(
      ['LOT', 'CATEGORY', 'SOURCE', 'AMOUNT', 'REMAINING', 'EXPIRES'],
      // guard: cli-user-lots
      view.wallet.lots.map((lot) => [
        String(lot.id),
        lot.category,
        lot.source,
        String(lot.amount),
        String(lot.remaining),
        lot.expiresAt === null ? 'never' : iso(lot.expiresAt),
      ]),
    ),
  );
  if (view.wallet.debts.length > 0) {
    out.push('', `debt ${view.wallet.debt}: what made it and what settled it (oldest first)`);
    out.push(
      formatTable(
        ['SOURCE', 'OF', 'TAKE-BACK', 'OWED', 'SETTLED', 'FORGIVEN', 'SINCE'],
        view.wallet.debts.map((debt) => [
          debt.source,
          debt.sourceId,
          debt.takeBackReference,
          String(debt.owed),
          String(debt.settled),
          String(debt.forgiven),
          iso(debt.createdAt),
        ]),
      ),
    );
  }
  out.push(
    '',
    `holds (${view.holds.items.length} shown, ${view.holds.activeTotal} active; active first, then the newest ended)`,
  );
  out.push(
    formatTable(
      ['HOLD', 'STATUS', 'AMOUNT', 'CAPTURED', 'RELEASED', 'EXPIRES', 'REFERENCE', 'REASON', 'LOTS (LOT:TOKENS)'],
      // guard: cli-user-holds
      view.holds.items.map((hold) => [
        hold.id,
        hold.status,
        String(hold.amount),
        hold.captured === null ? '-' : String(hold.captured),
        hold.released === null ? '-' : String(hold.released),
        iso(hold.expiresAt),
        hold.reference,
        hold.reason,
        hold.lots.map((lot) => `${lot.lotId}:${lot.amount}`).join(' ') || '-',
      ]),
    ),
  );
  out.push('', `events (${view.events.items.length} of ${view.events.total}, needing attention first)`);
  out.push(
    formatTable(
      [
        'ID',
        'ATTENTION',
        'PROVIDER',
        'EVENT ID',
        'TYPE',
        'STATUS',
        'ATTEMPTS',
        'OUTCOME',
        'RECEIVED',
        'ERROR / DETAIL',
      ],
      view.events.items.map((event) => [
        String(event.id),
        event.attention,
        event.provider,
        event.providerEventId,
        event.type,
        event.status,
        String(event.attempts),
        event.outcome?.code ?? '-',
        iso(event.receivedAt),
        oneLine(event.lastError ?? event.outcome?.detail ?? null),
      ]),
    ),
  );
  out.push('', `ledger (${view.ledger.entries.length} of ${view.ledger.total}, newest first)`);
  out.push(
    formatTable(
      ['ID', 'REFERENCE', 'AMOUNT', 'BEFORE', 'AFTER', 'REASON', 'EVENT', 'CREATED'],
      view.ledger.entries.map((entry) => [
        String(entry.id),
        entry.reference,
        String(entry.amount),
        String(entry.balanceBefore),
        String(entry.balanceAfter),
        entry.reason,
        entry.inboxEventId === null ? '-' : String(entry.inboxEventId),
        iso(entry.createdAt),
      ]),
    ),
  );
  out.push('', ...formatSubscription(view));
  out.push('', `payments (${view.payments.length}, newest first)`);
  out.push(
    formatTable(
      [
        'ID',
        'PAYMENT ID',
        'KIND',
        'PRODUCT',
        'AMOUNT',
        'STATUS',
        'TOKENS',
        'REFUNDED AMOUNT',
        'TOKENS BACK',
        'SHORTFALL',
        'EMAIL',
        'CREATED',
      ],
      view.payments.map((payment) => [
        String(payment.id),
        payment.providerPaymentId,
        payment.kind,
        payment.productId,
        `${payment.amountMinor} ${payment.currency}`,
        payment.status,
        String(payment.tokensGranted),
        String(payment.amountRefundedMinor),
        String(payment.tokensRefunded),
        String(payment.refundShortfall),
        payment.email === null
          ? '-'
          : `${payment.email.status}${payment.email.lastError ? ` (${oneLine(payment.email.lastError, 40)})` : ''}`,
        iso(payment.createdAt),
      ]),
    ),
  );
  out.push('', `refunds (${view.refunds.length}, token packs, newest first)`);
  out.push(
    formatTable(
      ['ID', 'PROVIDER', 'REFUND ID', 'PACK', 'CREDITED', 'TAKEN', 'SHORTFALL', 'CREDIT REFERENCE', 'CREATED'],
      view.refunds.map((refund) => [
        String(refund.id),
        refund.provider,
        refund.providerRefundId,
        refund.packId,
        String(refund.tokensCredited),
        String(refund.tokensTaken),
        String(refund.shortfall),
        refund.creditReference,
        iso(refund.createdAt),
      ]),
    ),
  );
  out.push('', `disputes (${view.disputes.length}, Stripe chargebacks, newest first)`);
  out.push(
    formatTable(
      ['DISPUTE', 'PAYMENT', 'STATUS', 'OWED', 'TAKEN', 'SHORTFALL', 'REINSTATED', 'WITHDRAWN', 'REINSTATED AT'],
      view.disputes.map((dispute) => [
        dispute.disputeId,
        dispute.providerPaymentId,
        dispute.status,
        String(dispute.tokensOwed),
        String(dispute.tokensTaken),
        String(dispute.shortfall),
        String(dispute.tokensReinstated),
        iso(dispute.withdrawnAt),
        dispute.reinstatedAt === null ? '-' : iso(dispute.reinstatedAt),
      ]),
    ),
  );
  out.push('', `top-ups (${view.topups.length}, newest first)`);
  out.push(
    formatTable(
      ['REFERENCE', 'PACK', 'TOKENS', 'AMOUNT', 'STATUS', 'PAYMENT INTENT', 'PAID', 'CREATED'],
      view.topups.map((topup) => [
        topup.reference,
        topup.packId,
        String(topup.tokens),
        `${topup.amountMinor} ${topup.currency}`,
        topup.status,
        topup.paymentIntentId ?? '-',
        iso(topup.paidAt),
        iso(topup.createdAt),
      ]),
    ),
  );
  out.push('', `installments (${view.installments.length}, by due date)`);
  out.push(
    formatTable(
      ['ID', 'SUBSCRIPTION', 'INVOICE', 'SEQ', 'TOKENS', 'DUE', 'STATUS', 'ATTEMPTS', 'GRANTED', 'ERROR'],
      view.installments.map((installment) => [
        String(installment.id),
        installment.subscriptionId,
        installment.invoiceId,
        String(installment.sequence),
        String(installment.tokens),
        iso(installment.dueAt),
        installment.status,
        String(installment.attempts),
        iso(installment.grantedAt),
        oneLine(installment.lastError),
      ]),
    ),
  );
  out.push('', `studio requests (${view.studioRequests.items.length} of ${view.studioRequests.total}, newest first)`);
  out.push(
    formatTable(
      ['ID', 'KIND', 'STATUS', 'CHARGED', 'FREE', 'ATTEMPTS', 'REFUNDED', 'CREATED', 'ERROR'],
      view.studioRequests.items.map((request) => [
        request.id,
        request.kind,
        request.status,
        String(request.tokensCharged),
        request.freeTier ? 'yes' : 'no',
        String(request.attempts),
        iso(request.refundedAt),
        iso(request.createdAt),
        request.error === null ? '' : oneLine(`${request.error.code ?? ''} ${request.error.message ?? ''}`.trim(), 60),
      ]),
    ),
  );
  out.push('', 'linked ids');
  out.push(
    formatTable(
      ['PROVIDER', 'KIND', 'ID', 'FIRST SEEN', 'LAST SEEN'],
      view.linkedIds.map((linked) => [
        linked.provider,
        linked.kind,
        linked.id,
        iso(linked.firstSeenAt),
        iso(linked.lastSeenAt),
      ]),
    ),
  );
  return `${out.join('\n')}\n`;
}

/** `tally user <id> [--json]`: the support view of one user, read from the database. */
export async function runUser(
  userId: string,
  options: {
    json?: boolean;
    eventLimit: number;
    ledgerLimit: number;
    studioLimit: number;
    historyLimit: number;
    holdLimit: number;
  },
): Promise<void> {
  const { DATABASE_URL } = parseEnv(baseEnvSchema.pick({ DATABASE_URL: true }), process.env);
  await withDatabase(DATABASE_URL, async (db) => {
    const view = await findUserSupportView(db, userId, {
      limits: {
        events: options.eventLimit,
        ledgerEntries: options.ledgerLimit,
        studioRequests: options.studioLimit,
        subscriptionHistory: options.historyLimit,
        holds: options.holdLimit,
      },
    });
    process.stdout.write(options.json ? `${JSON.stringify(view, null, 2)}\n` : formatSupportView(view));
  });
}
