import { generateKeyPairSync } from 'node:crypto';
import { oneTimeProduct, pubSubPush } from '../../support/fakes/google-play-keys';
import {
  fakePackageName,
  googlePlayActions,
  pushAudience,
  suiteStackWithFakeGooglePlay,
} from '../../support/google-play';
import { readJson } from '../../support/stack';

/**
 * POST /webhooks/google-play (docs/stores-google-play.md): a Pub/Sub push is stored only with the
 * push subscription's valid OIDC token, verified by google-auth-library against the fake's
 * certificates (real RS256 signatures, real X.509 certificates), and only for this app's package.
 */
describe('Google Play pushes', () => {
  const { stack, fake } = suiteStackWithFakeGooglePlay();
  const play = googlePlayActions(stack, fake);
  const now = () => Math.floor(Date.now() / 1000);
  const notification = () => oneTimeProduct(fakePackageName, 'tokens_100', `token-${play.newMessageId()}`);
  const stored = async (messageId: string) => (await stack.inboxRows('google_play', messageId)).length;

  it('stores a push with a valid token under its message id, and answers a redelivery as a duplicate', async () => {
    const messageId = play.newMessageId();
    const body = pubSubPush(messageId, notification());
    const first = await stack.postGooglePlay(body, play.validToken());
    expect(first.status).toBe(200);
    expect(await readJson(first)).toEqual({ status: 'accepted', eventId: messageId });
    const again = await stack.postGooglePlay(body, play.validToken());
    expect(await readJson(again)).toEqual({ status: 'duplicate', eventId: messageId });
    const [row] = await stack.inboxRows('google_play', messageId);
    expect(row).toMatchObject({ type: 'ONE_TIME_PRODUCT_PURCHASED', raw_body: body, environment: null });
    expect(await stored(messageId)).toBe(1);
  });

  const notTheAccount = 'the token is not the push subscription service account';
  const forged: [string, () => string | null, string][] = [
    ['no Authorization header', () => null, 'no Bearer token'],
    ['a token that is not a JWT', () => 'Bearer not-a-token', 'no Bearer token'],
    ['another scheme', () => `Basic ${fake.keys.oidcToken(pushAudience)}`, 'no Bearer token'],
    ['the wrong audience', () => `Bearer ${fake.keys.oidcToken('https://elsewhere.example/push')}`, 'wrong audience'],
    [
      'another service account',
      () => `Bearer ${fake.keys.oidcToken(pushAudience, { claims: { email: 'x@evil.iam.gserviceaccount.com' } })}`,
      notTheAccount,
    ],
    [
      'an unverified email',
      () => `Bearer ${fake.keys.oidcToken(pushAudience, { claims: { email_verified: false } })}`,
      notTheAccount,
    ],
    [
      'the wrong issuer',
      () => `Bearer ${fake.keys.oidcToken(pushAudience, { claims: { iss: 'https://accounts.evil.example' } })}`,
      'wrong issuer',
    ],
    [
      'an expired token',
      () => `Bearer ${fake.keys.oidcToken(pushAudience, { claims: { iat: now() - 7200, exp: now() - 3600 } })}`,
      'expired token',
    ],
    [
      'a bad signature',
      () =>
        `Bearer ${fake.keys.oidcToken(pushAudience, { signWith: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey })}`,
      'bad signature',
    ],
    [
      'an unknown key id',
      () => `Bearer ${fake.keys.oidcToken(pushAudience, { kid: 'not-google-key' })}`,
      'unknown signing key',
    ],
  ];
  it.each(forged)('refuses a push with %s (401, nothing stored)', async (_what, authorization, reason) => {
    const messageId = play.newMessageId();
    const answer = await stack.postGooglePlay(pubSubPush(messageId, notification()), authorization());
    expect(answer.status).toBe(401);
    expect((await readJson(answer)).error).toMatchObject({ code: 'unauthorized', message: reason });
    expect(await stored(messageId)).toBe(0);
  });

  it('refuses a token whose payload was changed after signing (the signature no longer matches)', async () => {
    const [header, , signature] = fake.keys.oidcToken('https://elsewhere.example/push').split('.');
    const payload = Buffer.from(
      JSON.stringify({
        iss: 'https://accounts.google.com',
        aud: pushAudience,
        email: fake.keys.pushServiceAccount,
        email_verified: true,
        iat: now(),
        exp: now() + 600,
      }),
    ).toString('base64url');
    const messageId = play.newMessageId();
    const answer = await stack.postGooglePlay(
      pubSubPush(messageId, notification()),
      `Bearer ${header}.${payload}.${signature}`,
    );
    expect(answer.status).toBe(401);
    expect((await readJson(answer)).error.message).toBe('bad signature');
    expect(await stored(messageId)).toBe(0);
  });

  it("refuses another app's notification (400, nothing stored) and a push whose data is not base64 JSON", async () => {
    const messageId = play.newMessageId();
    const other = await play.push(oneTimeProduct('com.other.app', 'tokens_100', 'token-x'), { messageId });
    expect(other.status).toBe(400);
    expect((await readJson(other)).error.code).toBe('invalid_event');
    expect(await stored(messageId)).toBe(0);
    const garbled = JSON.stringify({ message: { data: '%%% not base64', messageId: play.newMessageId() } });
    expect((await stack.postGooglePlay(garbled, play.validToken())).status).toBe(400);
  });

  it("fetches Google's certificates once for many pushes (the library's cache, by the answer's max-age)", async () => {
    const before = fake.count('certs');
    const answers = await Promise.all([0, 1, 2, 3, 4].map(() => play.push(notification())));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    // The first test's push fetched them; none of these did.
    expect(before).toBe(1);
    expect(fake.count('certs')).toBe(1);
  });
});

describe('Google Play pushes, not configured', () => {
  const { stack, fake } = suiteStackWithFakeGooglePlay({ configureIngest: false });
  const play = googlePlayActions(stack, fake);

  it('answers 503 not_configured and stores nothing', async () => {
    const messageId = play.newMessageId();
    const answer = await play.push(oneTimeProduct(fakePackageName, 'tokens_100', 'token-1'), { messageId });
    expect(answer.status).toBe(503);
    expect((await readJson(answer)).error.code).toBe('not_configured');
    expect(await stack.inboxRows('google_play', messageId)).toHaveLength(0);
    expect(fake.count('certs')).toBe(0);
  });
});
