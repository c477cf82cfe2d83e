import { findUserByAppleAccountToken, findUserByGoogleAccountId, hasStoreConsent } from '@tally/billing-core';
import { readJson } from '../../support/stack';
import { suiteStack } from '../../support/suite';

/**
 * What both stores share (docs/stores.md): the ids the app passes to StoreKit and Play Billing,
 * made on the first read and never changed, found back from the stores' notifications; and the
 * user's consent to Apple consumption data.
 */
describe('store accounts and consent', () => {
  const stack = suiteStack();
  let seq = 0;
  const newUser = () => `stores-${++seq}-${Date.now().toString(36)}`;
  const accountsOf = async (userId: string) => {
    const answer = await stack.apiRequest(`/v1/users/${userId}/store-accounts`);
    expect(answer.status).toBe(200);
    return (await readJson(answer)) as {
      userId: string;
      appleAppAccountToken: string;
      googleObfuscatedAccountId: string;
    };
  };

  it('gives each user their own ids, the same on every read (concurrent first reads agree), and finds the user back', async () => {
    const userId = newUser();
    const reads = await Promise.all([0, 1, 2, 3].map(() => accountsOf(userId)));
    const [first] = reads;
    for (const read of reads) expect(read).toEqual(first);
    expect(first?.appleAppAccountToken).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(first?.googleObfuscatedAccountId).toMatch(/^[0-9a-f]{32}$/);
    // Never the user id itself: the stores must not learn it.
    expect([first?.appleAppAccountToken, first?.googleObfuscatedAccountId]).not.toContain(userId);
    const other = await accountsOf(newUser());
    expect(other.appleAppAccountToken).not.toBe(first?.appleAppAccountToken);
    expect(other.googleObfuscatedAccountId).not.toBe(first?.googleObfuscatedAccountId);
    expect(await findUserByAppleAccountToken(stack.db, first?.appleAppAccountToken.toUpperCase())).toBe(userId);
    expect(await findUserByGoogleAccountId(stack.db, first?.googleObfuscatedAccountId)).toBe(userId);
    expect(await findUserByAppleAccountToken(stack.db, 'not-a-uuid')).toBeNull();
    expect(await findUserByGoogleAccountId(stack.db, 'never-given')).toBeNull();
  });

  it("records the user's consent, the latest answer standing; without one Tally has none", async () => {
    const userId = newUser();
    expect(await hasStoreConsent(stack.db, userId)).toBe(false);
    const consent = (consented: unknown) =>
      stack.apiRequest(`/v1/users/${userId}/store-consent`, { method: 'POST', body: { consented } });
    const given = await consent(true);
    expect(await readJson(given)).toMatchObject({ userId, consented: true });
    expect(await hasStoreConsent(stack.db, userId)).toBe(true);
    expect(await readJson(await consent(false))).toMatchObject({ userId, consented: false });
    expect(await hasStoreConsent(stack.db, userId)).toBe(false);
    const bad = await consent('yes');
    expect(bad.status).toBe(400);
    expect(await hasStoreConsent(stack.db, userId)).toBe(false);
  });
});
