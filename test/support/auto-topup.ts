import type { FakeStripe } from './fakes/fake-stripe';
import type { CardBehaviour } from './fakes/fake-stripe-off-session';
import { readJson, type TestStack } from './stack';
import { stripeEventBody } from './stripe-events';

/**
 * Saves a card for `userId` as an app would (docs/auto-topup.md): `POST …/payment-methods/setup`,
 * the fake Stripe plays Stripe.js confirming the SetupIntent, and a signed `setup_intent.succeeded`
 * goes through the inbox. Returns the saved payment method's id.
 */
export async function saveCard(
  stack: TestStack,
  fake: FakeStripe,
  userId: string,
  behaviour: CardBehaviour = 'succeeds',
): Promise<string> {
  const setup = await stack.apiRequest(`/v1/users/${userId}/payment-methods/setup`, { method: 'POST' });
  expect(setup.status).toBe(201);
  const { setupIntentId } = (await readJson(setup)) as { setupIntentId: string };
  const intent = fake.completeSetupIntent(setupIntentId, behaviour);
  const row = await stack.finishedInboxRow(
    'stripe',
    await stack.deliverStripe(stripeEventBody('setup_intent.succeeded', intent)),
  );
  expect(row.outcome_code).toBe('payment_method_saved');
  return String(intent.payment_method);
}

/** `PUT …/auto-topup` (tokens_100: 100 tokens for 499 usd cents in the example catalog). */
export async function setAutoTopup(
  stack: TestStack,
  userId: string,
  settings: { threshold: number; monthlyLimit?: number; enabled?: boolean; packId?: string },
): Promise<Record<string, unknown>> {
  const answer = await stack.apiRequest(`/v1/users/${userId}/auto-topup`, {
    method: 'PUT',
    body: {
      packId: settings.packId ?? 'tokens_100',
      threshold: settings.threshold,
      monthlyLimit: settings.monthlyLimit ?? 5,
      enabled: settings.enabled ?? true,
    },
  });
  expect(answer.status).toBe(200);
  return (await readJson(answer)) as Record<string, unknown>;
}

/** An app grant of `amount` tokens (201). */
export async function fund(stack: TestStack, userId: string, amount: number): Promise<void> {
  const reference = `seed-${userId}-${amount}`;
  const granted = await stack.apiRequest(`/v1/users/${userId}/grants`, { method: 'POST', body: { amount, reference } });
  expect(granted.status).toBe(201);
}

/** `POST …/debits`: the answer's status. */
export async function debit(stack: TestStack, userId: string, amount: number, reference: string): Promise<number> {
  const answer = await stack.apiRequest(`/v1/users/${userId}/debits`, {
    method: 'POST',
    body: { amount, reference: `${userId}-${reference}` },
  });
  await answer.text();
  return answer.status;
}

/** The user's attempts as the database has them, oldest first. */
export function attemptsOf(stack: TestStack, userId: string) {
  return stack.db
    .selectFrom('auto_topup_attempts')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The user's app webhook messages of a type, oldest first. */
export async function messagesOf(stack: TestStack, userId: string, type: string): Promise<Record<string, unknown>[]> {
  const rows = await stack.db
    .selectFrom('app_webhook_messages')
    .select('data')
    .where('user_id', '=', userId)
    .where('type', '=', type as never)
    .orderBy('id')
    .execute();
  return rows.map((row) => row.data as Record<string, unknown>);
}
