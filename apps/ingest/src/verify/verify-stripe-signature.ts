import Stripe from 'stripe';

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/**
 * Verifies a `Stripe-Signature` header over the raw body bytes with stripe-node, against every
 * configured secret (Stripe sends one `v1` per active secret during a roll; any match is
 * enough). The SDK rejects timestamps older than the tolerance; it does not reject timestamps in
 * the future, so a skew beyond the tolerance in that direction is refused here.
 *
 * The header must carry exactly one `t=`. stripe-node signs and checks against the last `t=` it
 * sees, so a second one would let the skew check here read a different timestamp from the one
 * the HMAC covers: a current `t=` in front of a future-dated signature would pass both.
 */
// stripe-node's signature helper (typed nullable; it is always set by the SDK's module).
const signature = Stripe.webhooks.signature;

export function verifyStripeSignature(options: {
  /**
   * The body's bytes, or its text as the route decoded it (UTF-8, a leading BOM dropped): the
   * text stripe-node itself decodes bytes to (TextDecoder) and signs over, so either is checked
   * alike; passing the text spares the SDK a second decode of the body.
   */
  rawBody: Uint8Array | string;
  header: string | undefined;
  secrets: readonly string[];
  toleranceSeconds: number;
  nowMs: number;
}): SignatureCheck {
  const { rawBody, header, secrets, toleranceSeconds, nowMs } = options;
  if (!header) return { ok: false, reason: 'missing Stripe-Signature header' };
  const timestamps = timestampsOf(header);
  if (timestamps.length > 1) return { ok: false, reason: 'Stripe-Signature carries more than one timestamp' };
  const timestamp = timestamps[0];
  if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp)) {
    return { ok: false, reason: 'Stripe-Signature has no timestamp' };
  }
  // guard: stripe-signature-future
  if (Number(timestamp) - Math.floor(nowMs / 1000) > toleranceSeconds) {
    return { ok: false, reason: 'signature timestamp is in the future beyond the tolerance' };
  }
  if (!signature) return { ok: false, reason: 'signature verification unavailable' };
  let lastReason = 'no webhook secret configured';
  for (const secret of secrets) {
    try {
      // verifyHeader checks without parsing: the body is parsed once, for the draft.
      // guard: stripe-signature-verify
      // guard: stripe-signature-tolerance
      signature.verifyHeader(rawBody, header, secret, toleranceSeconds, undefined, nowMs);
      return { ok: true };
    } catch (error) {
      lastReason = error instanceof Error ? (error.message.split('\n')[0] ?? 'invalid signature') : 'invalid signature';
    }
  }
  return { ok: false, reason: lastReason };
}

/**
 * Every `t=` value in the header. Keys are compared after trimming, which counts more parts as
 * timestamps than stripe-node does (it matches `t` exactly), never fewer.
 */
function timestampsOf(header: string): string[] {
  return header
    .split(',')
    .map((part) => part.split('='))
    .filter(([key]) => key?.trim() === 't')
    .map(([, value]) => (value ?? '').trim());
}
