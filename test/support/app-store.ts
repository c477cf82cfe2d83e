import { appleVerifierFor } from './apple-notifications';
import { ApplePki } from './apple-signing';
import { FakeAppStore } from './fakes/fake-app-store';
import { TestStack } from './stack';
import type { SuiteStackOptions } from './suite';

/**
 * A stack whose App Store Server API is a fake App Store of its own (signing with `pki`, a test CA
 * made for this describe block) and whose ingest verifies notifications against that CA's root,
 * for this describe block; `verifyNotifications: false` leaves the notification check unset
 * (ingest answers 503, reconciliation is not configured). Stopped, with the fake and the CA, after
 * the block.
 */
export function suiteStackWithFakeAppStore(options: SuiteStackOptions & { verifyNotifications?: boolean } = {}): {
  stack: TestStack;
  fake: FakeAppStore;
  pki: ApplePki;
} {
  const { verifyNotifications = true, worker, redisUrl, http, ...rest } = options;
  const pki = ApplePki.create();
  const fake = new FakeAppStore(pki);
  const stack = new TestStack(redisUrl, http);
  beforeAll(async () => {
    await fake.listen();
    stack.stopAlso(() => fake.stop());
    await stack.begin({
      ...rest,
      ports: { ...rest.ports, appStore: fake.api() },
      ...(verifyNotifications ? { appleNotifications: appleVerifierFor(pki) } : {}),
    });
    if (worker) stack.startWorker(worker);
  });
  afterAll(async () => {
    await stack.stop();
    pki.dispose();
  });
  return { stack, fake, pki };
}
