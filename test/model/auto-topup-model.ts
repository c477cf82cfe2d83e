/**
 * Auto top-up in the model (product.md "Auto top-up (Stripe, opt-in)"), written from the contract
 * like the rest of money-model.ts: the spends write attempts there (triggerAutoTopup); here, the
 * settings, the card and the worker's run of an attempt. Shares no code with the implementation.
 */
import {
  type Answer,
  availableOf,
  type CardBehaviour,
  type ModelWallet,
  payPack,
  saw,
  systemMonth,
} from './money-model';

/** Failed attempts in a row that turn auto top-up off. */
const FAILURES_TO_DISABLE = 3;

/** Saves a card (if none yet) and `PUT …/auto-topup` with it on: enabling clears the failures in a row. */
export function enableAutoTopup(w: ModelWallet, threshold: number, monthlyLimit: number): Answer {
  const card = w.autoTopup?.card ?? 'succeeds';
  w.autoTopup = { threshold, monthlyLimit, enabled: true, failuresInARow: 0, disabledReason: null, card };
  return { status: 200, body: { enabled: true, threshold, monthlyLimit, failuresInARow: 0, disabledReason: null } };
}

/** How the saved card answers the next off-session charges. */
export function setCard(w: ModelWallet, card: CardBehaviour): Answer {
  if (w.autoTopup) w.autoTopup.card = card;
  return { status: 200, body: {} };
}

/**
 * The worker runs the attempt in flight: canceled (nothing charged) when auto top-up is off or the
 * available is back at the threshold; else the card is charged: paid, it credits the pack through
 * the top-up path (a purchased lot, the debt settled first, a payment refunds and disputes find),
 * the failures in a row start again; refused, the attempt fails and counts, the third in a row
 * turning auto top-up off.
 */
export function chargeAutoTopup(w: ModelWallet): Answer {
  const attempt = w.attempts.find((a) => a.status === 'pending');
  const a = w.autoTopup;
  if (!attempt || !a) return { status: 200, body: {} };
  if (!a.enabled || availableOf(w) >= a.threshold) {
    saw(w, 'an auto top-up was canceled before its charge');
    attempt.status = 'canceled';
    return { status: 200, body: {} };
  }
  if (a.card === 'succeeds') {
    saw(w, 'an auto top-up credited');
    attempt.payment = payPack(w).payment;
    attempt.status = 'succeeded';
    a.failuresInARow = 0;
    return { status: 200, body: {} };
  }
  attempt.status = 'failed';
  a.failuresInARow += 1;
  if (a.enabled && a.failuresInARow >= FAILURES_TO_DISABLE) {
    saw(w, 'three failed auto top-ups turned it off');
    a.enabled = false;
    a.disabledReason = 'failures';
  }
  return { status: 200, body: {} };
}

/** What `GET …/auto-topup` and its attempts show, reduced to what the contract fixes (null: never enabled). */
export function autoTopupView(w: ModelWallet) {
  const a = w.autoTopup;
  if (!a) return null;
  const month = systemMonth(w, w.now);
  return {
    enabled: a.enabled,
    threshold: a.threshold,
    monthlyLimit: a.monthlyLimit,
    failuresInARow: a.failuresInARow,
    disabledReason: a.disabledReason,
    thisMonth: w.attempts.filter(
      (attempt) =>
        (attempt.status === 'pending' || attempt.status === 'succeeded') && systemMonth(w, attempt.at) === month,
    ).length,
    attempts: w.attempts.map((attempt) => attempt.status),
  };
}
