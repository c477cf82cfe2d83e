import type { AutoTopupAttemptView, AutoTopupView } from '@tally/billing-core';
import { z } from 'zod';

/**
 * `PUT …/auto-topup` (docs/auto-topup.md): the whole setting, strict (a misspelt field is a 400).
 * The pack must be sold through Stripe (`unknown_pack`).
 */
export const autoTopupBodySchema = z.strictObject({
  packId: z
    .string()
    .min(1)
    .max(255)
    .describe('the token pack each auto top-up buys (a catalog pack with a Stripe price)'),
  threshold: z
    .number()
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .describe('a spend that leaves `available` below this triggers a top-up'),
  monthlyLimit: z.number().int().min(1).max(100).describe('top-ups per calendar month (UTC), 1 to 100'),
  enabled: z.boolean().describe('true turns it on (and clears the failures in a row); false turns it off'),
});

export const autoTopupAttemptSchema = z.strictObject({
  id: z.string(),
  reference: z.string().describe("`autotopup:{id}`: the top-up's reference and Stripe's idempotency key"),
  packId: z.string(),
  status: z.enum(['pending', 'processing', 'succeeded', 'failed', 'canceled']),
  availableAfter: z.number().int().describe('what the triggering spend left available'),
  threshold: z.number().int(),
  paymentIntentId: z.string().nullable(),
  failureCode: z
    .string()
    .nullable()
    .describe('why it failed or was canceled (a decline code, authentication_required, …)'),
  requiresAction: z.boolean().describe('the bank wants the customer on session (see wallet.auto_topup_failed)'),
  tries: z.number().int(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
});

export const autoTopupAnswerSchema = z.strictObject({
  userId: z.string(),
  enabled: z.boolean(),
  packId: z.string().nullable(),
  threshold: z.number().int().nullable(),
  monthlyLimit: z.number().int().nullable(),
  disabledReason: z
    .enum(['failures', 'operator'])
    .nullable()
    .describe('why Tally turned it off: three failures in a row, or support; the app enabling it again turns it on'),
  failuresInARow: z.number().int(),
  paymentMethod: z
    .strictObject({ id: z.string(), customerId: z.string(), savedAt: z.string() })
    .nullable()
    .describe('the card setup_intent.succeeded saved; nothing is charged without one'),
  thisMonth: z.number().int().describe('top-ups this calendar month that count against monthlyLimit'),
  inFlight: autoTopupAttemptSchema.nullable(),
});

export const autoTopupAttemptsAnswerSchema = z.strictObject({
  userId: z.string(),
  attempts: z.array(autoTopupAttemptSchema).describe('newest first, at most 20'),
});

/** The auto top-up's answer, `userId` as the caller spelt it. */
export function autoTopupAnswerOf(view: AutoTopupView, userId: string) {
  return { status: 200, body: { ...view, userId } satisfies z.input<typeof autoTopupAnswerSchema> };
}

export function attemptsAnswerOf(attempts: AutoTopupAttemptView[], userId: string) {
  return { status: 200, body: { userId, attempts } satisfies z.input<typeof autoTopupAttemptsAnswerSchema> };
}
