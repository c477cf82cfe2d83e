import { revenueCatTokenPackRefund, revenueCatTokenPurchase } from '../../support/events';
import {
  stripeDispute,
  stripeEventBody,
  stripePackCheckout,
  stripePackIntent,
  stripeRefundedCharge,
} from '../../support/stripe-events';
import type { Prng } from './prng';
import type { SimulatedEvent } from './provider-simulator';

/** Every body carries this marker in a field nothing logs: it must never appear in a log line. */
export const rawBodyCanary = 'chaos-raw-body-canary-7f3a';
/** A customer email carried by Stripe events: it must never appear in a log line. */
export const canaryEmail = 'chaos.customer.canary@example.org';

/** A RevenueCat token pack purchase (100 tokens), with its own store transaction. */
export function rcPurchase(id: string, userId: string, transactionId = `tx-${id}`): SimulatedEvent {
  const subscriberAttributes = { $email: { value: canaryEmail }, note: { value: rawBodyCanary } };
  return {
    provider: 'revenuecat',
    id,
    body: revenueCatTokenPurchase({ id, userId, transactionId, subscriberAttributes }),
  };
}

/** RevenueCat's refund of a consumable: a CANCELLATION naming the purchase's transaction. */
export function rcRefund(id: string, userId: string, transactionId: string): SimulatedEvent {
  return { provider: 'revenuecat', id, body: revenueCatTokenPackRefund({ id, userId, transactionId }) };
}

/** Stripe payment_intent.succeeded for a 100-token pack (sandbox: livemode false). */
export function stripePackPaid(eventId: string, paymentIntentId: string, userId: string): SimulatedEvent {
  return {
    provider: 'stripe',
    id: eventId,
    body: stripeEventBody(
      'payment_intent.succeeded',
      {
        ...stripePackIntent({ id: paymentIntentId, userId, customer: `cus_${userId}`, email: canaryEmail }),
        description: rawBodyCanary,
      },
      { eventId },
    ),
  };
}

/**
 * Stripe checkout.session.completed of a paid payment-mode session for a 100-token pack: the same
 * payment as the `payment_intent.succeeded` of `paymentIntentId` (both credit it under
 * `stripe:payment:{paymentIntentId}`). The pack is named in the session's metadata.
 */
export function stripePackCheckoutCompleted(
  eventId: string,
  sessionId: string,
  paymentIntentId: string,
  userId: string,
): SimulatedEvent {
  return {
    provider: 'stripe',
    id: eventId,
    body: stripeEventBody(
      'checkout.session.completed',
      {
        ...stripePackCheckout({
          id: sessionId,
          userId,
          customer: `cus_${userId}`,
          paymentIntent: paymentIntentId,
          email: canaryEmail,
        }),
        metadata: { pack_id: 'tokens_100', note: rawBodyCanary },
      },
      { eventId },
    ),
  };
}

/** Stripe charge.refunded (full) of a pack's payment intent. */
export function stripePackRefunded(eventId: string, chargeId: string, paymentIntentId: string): SimulatedEvent {
  return {
    provider: 'stripe',
    id: eventId,
    body: stripeEventBody('charge.refunded', stripeRefundedCharge({ id: chargeId, paymentIntent: paymentIntentId }), {
      eventId,
    }),
  };
}

/**
 * A Stripe `charge.dispute.*` event of a pack's payment (`created`, `funds_withdrawn`,
 * `funds_reinstated`), its object the dispute as the event's moment shows it. The worker re-reads
 * the dispute from the fake Stripe (`putDispute`), whose state decides what is applied.
 */
export function stripeDisputeEvent(
  eventId: string,
  type: 'created' | 'funds_withdrawn' | 'funds_reinstated',
  dispute: { id: string; charge: string; paymentIntent: string },
): SimulatedEvent {
  return {
    provider: 'stripe',
    id: eventId,
    body: stripeEventBody(
      `charge.dispute.${type}`,
      stripeDispute({
        ...dispute,
        withdrawn: type === 'funds_withdrawn',
        reinstated: type === 'funds_reinstated',
      }),
      { eventId },
    ),
  };
}

/** The dispute as Stripe's API answers it at a stage (`FakeStripe.putDispute`). */
export function stripeDisputeState(
  dispute: { id: string; charge: string; paymentIntent: string },
  stage: 'created' | 'withdrawn' | 'reinstated',
): Record<string, unknown> {
  return stripeDispute({ ...dispute, withdrawn: stage === 'withdrawn', reinstated: stage === 'reinstated' });
}

/**
 * A stream of token pack purchases over `users`, half RevenueCat and half Stripe (by the PRNG),
 * with the model's expected balance (100 per distinct purchase).
 */
export function purchaseStream(
  rng: Prng,
  prefix: string,
  users: string[],
  count: number,
): { events: SimulatedEvent[]; expected: Map<string, number> } {
  const events: SimulatedEvent[] = [];
  const expected = new Map(users.map((user) => [user, 0]));
  for (let n = 0; n < count; n += 1) {
    const userId = rng.pick(users);
    if (rng.chance(0.5)) events.push(rcPurchase(`${prefix}-rc-${n}`, userId));
    else events.push(stripePackPaid(`evt_${prefix}_${n}`, `pi_${prefix}_${n}`, userId));
    expected.set(userId, (expected.get(userId) ?? 0) + 100);
  }
  return { events, expected };
}
