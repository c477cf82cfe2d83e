import { FakeGooglePlay, type FakeProductPurchase, fakePackageName } from './fakes/fake-google-play';
import { pubSubPush } from './fakes/google-play-keys';
import { readJson, TestStack } from './stack';
import type { SuiteStackOptions } from './suite';

/** The audience the tests' push subscription is configured with (GOOGLE_PUBSUB_AUDIENCE). */
export const pushAudience = 'https://tally.test/webhooks/google-play';

/**
 * A stack whose Play Developer API is a fake Google of its own (its client timing out after
 * `googlePlayTimeoutMs`, 2 s by default) and whose ingest verifies pushes against the fake's OIDC
 * certificates, for this describe block. `configureIngest: false` leaves ingest unconfigured (503).
 */
export function suiteStackWithFakeGooglePlay(
  options: SuiteStackOptions & { googlePlayTimeoutMs?: number; configureIngest?: boolean } = {},
): { stack: TestStack; fake: FakeGooglePlay } {
  const fake = new FakeGooglePlay();
  const { googlePlayTimeoutMs, configureIngest = true, worker, redisUrl, http, ...rest } = options;
  const stack = new TestStack(redisUrl, http);
  afterAll(() => stack.stop());
  beforeAll(async () => {
    await fake.listen();
    stack.stopAlso(() => fake.stop());
    await stack.begin({
      ...rest,
      ports: { ...rest.ports, googlePlay: fake.api(googlePlayTimeoutMs) },
      ...(configureIngest
        ? {
            googlePlayPush: {
              packageName: fakePackageName,
              audience: pushAudience,
              serviceAccountEmail: fake.keys.pushServiceAccount,
              certsUrl: fake.certsUrl,
            },
          }
        : {}),
    });
    if (worker) stack.startWorker(worker);
  });
  return { stack, fake };
}

/** What a Google Play test does over HTTP: pushes (with a valid token unless told), the user's Play account id. */
export function googlePlayActions(stack: TestStack, fake: FakeGooglePlay) {
  let seq = 0;
  const validToken = () => `Bearer ${fake.keys.oidcToken(pushAudience)}`;
  return {
    validToken,
    newMessageId: () => `${Date.now()}${++seq}`,
    /** Posts a push of `notification` (authorization: a valid token unless given; null: none). */
    push(notification: Record<string, unknown>, options: { messageId?: string; authorization?: string | null } = {}) {
      const messageId = options.messageId ?? `${Date.now()}${++seq}`;
      const authorization = options.authorization === undefined ? validToken() : options.authorization;
      return stack.postGooglePlay(pubSubPush(messageId, notification), authorization);
    },
    /** Pushes with a valid token and waits for the inbox row to finish; returns it. */
    async deliver(notification: Record<string, unknown>, messageId = `${Date.now()}${++seq}`) {
      const answer = await stack.postGooglePlay(pubSubPush(messageId, notification), validToken());
      if (answer.status !== 200) throw new Error(`push answered ${answer.status}: ${await answer.text()}`);
      return stack.finishedInboxRow('google_play', messageId);
    },
    /** The user's `googleObfuscatedAccountId` (store-accounts), made on first read. */
    async accountOf(userId: string): Promise<string> {
      const answer = await stack.apiRequest(`/v1/users/${userId}/store-accounts`);
      return ((await readJson(answer)) as { googleObfuscatedAccountId: string }).googleObfuscatedAccountId;
    },
    /** Sets the purchase products.get answers (purchased, not consumed, a real purchase, by default). */
    setPurchase(token: string, purchase: Partial<FakeProductPurchase> & { orderId: string; accountId: string }) {
      const { accountId, ...rest } = purchase;
      fake.setPurchase(token, {
        productId: 'tokens_100',
        purchaseState: 0,
        consumptionState: 0,
        acknowledgementState: 0,
        obfuscatedExternalAccountId: accountId,
        purchaseTimeMillis: String(Date.now()),
        ...rest,
      });
    },
    async balanceOf(userId: string) {
      return (await readJson(await stack.apiRequest(`/v1/users/${userId}/wallet`))) as {
        balance: number;
        available: number;
        debt: number;
      };
    },
  };
}

export { fakePackageName };
