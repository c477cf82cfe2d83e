import Stripe from 'stripe';
import { verifyStripeSignature } from './verify-stripe-signature';

const secret = 'whsec_unit_current';
const previousSecret = 'whsec_unit_previous';
const toleranceSeconds = 300;
const nowMs = 1_750_000_000_000;
const now = Math.floor(nowMs / 1000);
const body = JSON.stringify({ id: 'evt_unit_1', object: 'event', type: 'payment_intent.succeeded', data: {} });

/** A header signed for real by stripe-node's own test helper. */
function sign(options: { payload?: string; secret?: string; timestamp?: number; scheme?: string } = {}): string {
  return Stripe.webhooks.generateTestHeaderString({
    payload: options.payload ?? body,
    secret: options.secret ?? secret,
    timestamp: options.timestamp ?? now,
    ...(options.scheme ? { scheme: options.scheme } : {}),
  });
}

/** The `v1=` part of a signed header. */
function v1Of(header: string): string {
  const part = header.split(',').find((item) => item.startsWith('v1='));
  if (!part) throw new Error('no v1 in header');
  return part;
}

function verify(header: string | undefined, rawBody = body, secrets: readonly string[] = [secret]) {
  return verifyStripeSignature({ rawBody: Buffer.from(rawBody), header, secrets, toleranceSeconds, nowMs });
}

describe('Stripe-Signature verification', () => {
  it('accepts a current header signed with a configured secret', () => {
    expect(verify(sign())).toEqual({ ok: true });
  });

  it('judges a body passed as the text ingest decoded exactly as its bytes (multi-byte, BOM)', () => {
    const text = JSON.stringify({ id: 'evt_unit_text', object: 'event', type: 'x', data: { name: 'Zoë 🎵' } });
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
    const decoded = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    for (const header of [sign({ payload: text }), sign({ payload: `${text} ` })]) {
      const asBytes = verifyStripeSignature({ rawBody: bytes, header, secrets: [secret], toleranceSeconds, nowMs });
      const asText = verifyStripeSignature({ rawBody: decoded, header, secrets: [secret], toleranceSeconds, nowMs });
      expect(asText).toEqual(asBytes);
    }
    expect(
      verifyStripeSignature({
        rawBody: text,
        header: sign({ payload: text }),
        secrets: [secret],
        toleranceSeconds,
        nowMs,
      }),
    ).toEqual({ ok: true });
  });

  it('accepts a header signed with any configured secret during a rotation', () => {
    expect(verify(sign({ secret: previousSecret }), body, [secret, previousSecret])).toEqual({ ok: true });
  });

  it('accepts a header carrying one v1 per active secret when either is configured (secret roll)', () => {
    const header = `t=${now},${v1Of(sign({ secret: 'whsec_unit_other' }))},${v1Of(sign())}`;
    expect(verify(header)).toEqual({ ok: true });
  });

  it('refuses a header with two timestamps, even when one signature is valid for each', () => {
    const future = now + 3_600;
    const futureSigned = sign({ timestamp: future });
    // A current t= in front of a future-dated signed header: stripe-node would read the last t=.
    expect(verify(`t=${now},${futureSigned}`)).toEqual({
      ok: false,
      reason: 'Stripe-Signature carries more than one timestamp',
    });
    expect(verify(`${sign()},t=${now}`)).toEqual({
      ok: false,
      reason: 'Stripe-Signature carries more than one timestamp',
    });
    expect(verify(`${sign()}, t=${future}`)).toEqual({
      ok: false,
      reason: 'Stripe-Signature carries more than one timestamp',
    });
  });

  it("answers the SDK's reason as one trimmed sentence (no trailing space, no newline)", () => {
    expect(verify(sign({ secret: 'whsec_unit_other' }))).toEqual({
      ok: false,
      reason:
        'No signatures found matching the expected signature for payload. Are you passing the raw request body you received from Stripe?',
    });
  });

  it('refuses a header with only a v0 signature (only v1 counts)', () => {
    const check = verify(sign({ scheme: 'v0' }));
    expect(check).toEqual({ ok: false, reason: expect.stringContaining('No signatures found') });
  });

  it('refuses a correctly signed timestamp further in the future than the tolerance', () => {
    expect(verify(sign({ timestamp: now + toleranceSeconds + 1 }))).toEqual({
      ok: false,
      reason: 'signature timestamp is in the future beyond the tolerance',
    });
    expect(verify(sign({ timestamp: now + toleranceSeconds }))).toEqual({ ok: true });
  });

  it('refuses a correctly signed timestamp older than the tolerance (replay)', () => {
    expect(verify(sign({ timestamp: now - toleranceSeconds - 1 }))).toEqual({
      ok: false,
      reason: expect.stringContaining('Timestamp outside the tolerance zone'),
    });
  });

  it('refuses a body changed after signing', () => {
    const tampered = body.replace('evt_unit_1', 'evt_unit_2');
    expect(verify(sign(), tampered)).toEqual({
      ok: false,
      reason: expect.stringContaining('No signatures found matching the expected signature'),
    });
  });

  it('accepts a body with multi-byte UTF-8 characters signed by stripe-node (the HMAC covers the bytes as sent)', () => {
    const payload = JSON.stringify({ id: 'evt_unit_2', type: 'customer.updated', data: { name: 'Zoë 東京 🎵' } });
    expect(verify(sign({ payload }), payload)).toEqual({ ok: true });
    expect(verify(sign({ payload }), payload.replace('Zoë', 'Zoe'))).toEqual({
      ok: false,
      reason: expect.stringContaining('No signatures found matching the expected signature'),
    });
  });

  it('refuses a v1 that is the right digest in upper case or followed by more characters', () => {
    const header = sign();
    const v1 = v1Of(header);
    expect(verify(`t=${now},${v1.toUpperCase().replace('V1=', 'v1=')}`)).toEqual({
      ok: false,
      reason: expect.stringContaining('No signatures found matching'),
    });
    expect(verify(`t=${now},${v1}00`)).toEqual({
      ok: false,
      reason: expect.stringContaining('No signatures found matching'),
    });
  });

  it('refuses a header signed with a secret that is not configured', () => {
    expect(verify(sign({ secret: 'whsec_unit_unknown' }))).toEqual({ ok: false, reason: expect.any(String) });
  });

  it.each([
    ['a missing header', undefined, 'missing Stripe-Signature header'],
    ['a header without t=', `${v1Of(sign())}`, 'Stripe-Signature has no timestamp'],
    ['a non-numeric t=', `t=soon,${v1Of(sign())}`, 'Stripe-Signature has no timestamp'],
  ])('refuses %s', (_case, header, reason) => {
    expect(verify(header)).toEqual({ ok: false, reason });
  });
});
