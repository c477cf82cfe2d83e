import type { DB } from '@tally/billing-core';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { eventually, type Json, readJson, type TestStack } from './stack';
import { stripeId } from './stripe-events';

/** A response as its status and JSON body, for assertions on the whole answer. */
export async function answerOf(response: Response): Promise<{ status: number; body: Json }> {
  return { status: response.status, body: await readJson(response) };
}

/**
 * POSTs `body` to the api (the app key under /v1, the admin key under /admin, as
 * TestStack.apiRequest chooses) and answers `{ status, body }`.
 */
export function postAnswer(stack: TestStack, path: string, body: Json = {}, headers: Record<string, string> = {}) {
  return stack.apiRequest(path, { method: 'POST', body, headers }).then(answerOf);
}

/**
 * Grants `amount` tokens to `userId` through the app's grant route under a fresh reference (and
 * `expiresAt` when given); expects 201 and returns the lot it made.
 */
export async function grantOverApi(stack: TestStack, userId: string, amount: number, expiresAt?: string) {
  const granted = await postAnswer(stack, `/v1/users/${userId}/grants`, {
    amount,
    reference: `g-${stripeId('r')}`,
    ...(expiresAt ? { expiresAt } : {}),
  });
  expect(granted.status).toBe(201);
  return granted.body.lotId as number;
}

/** Waits until the database clock is past `expiresAt` (polled, never assumed from the test's clock). */
export function untilDatabaseClockPast(db: Kysely<DB>, expiresAt: string) {
  return eventually(
    `the database clock past ${expiresAt}`,
    async () =>
      (await sql<{ past: boolean }>`SELECT now() > ${expiresAt}::timestamptz AS past`.execute(db)).rows[0]?.past,
  );
}
