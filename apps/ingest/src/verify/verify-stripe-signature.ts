import Stripe from 'stripe';

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/**
 * Verifies a `Stripe-Signature` header over the raw body bytes with stripe-node, against every
 * configured secret (Stripe sends one `v1` per active secret during a roll; any match is
 * enough). The SDK rejects timestamps older than the tolerance; it does not reject timestamps in
 * the future, so a skew beyond the tolerance in that direction is refused here.
 */
export function verifyStripeSignature(options: {
  rawBody: Buffer;
  header: string | undefined;
  secrets: readonly string[];
  toleranceSeconds: number;
  nowMs: number;
}): SignatureCheck {
  const { rawBody, header, secrets, toleranceSeconds, nowMs } = options;
  if (!header) return { ok: false, reason: 'missing Stripe-Signature header' };
  const timestamp = signedTimestampOf(header);
  if (timestamp === null) return { ok: false, reason: 'Stripe-Signature has no timestamp' };
  if (timestamp - Math.floor(nowMs / 1000) > toleranceSeconds) {
    return { ok: false, reason: 'signature timestamp is in the future beyond the tolerance' };
  }
  let lastReason = 'no webhook secret configured';
  for (const secret of secrets) {
    try {
      Stripe.webhooks.constructEvent(rawBody, header, secret, toleranceSeconds, undefined, nowMs);
      return { ok: true };
    } catch (error) {
      lastReason = error instanceof Error ? (error.message.split('\n')[0] ?? 'invalid signature') : 'invalid signature';
    }
  }
  return { ok: false, reason: lastReason };
}

function signedTimestampOf(header: string): number | null {
  for (const part of header.split(',')) {
    const [key, value] = part.split('=', 2);
    if (key?.trim() === 't' && value !== undefined && /^\d{1,12}$/.test(value.trim())) return Number(value.trim());
  }
  return null;
}
