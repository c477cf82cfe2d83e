import type { SpendLimitsView } from '@tally/billing-core';
import { z } from 'zod';

const wholeTokens = { error: 'must be a whole number of tokens, 0 or more, or null (the default applies)' };
const limitValue = z
  .number(wholeTokens)
  .int(wholeTokens)
  .min(0, wholeTokens)
  .max(Number.MAX_SAFE_INTEGER, wholeTokens)
  .nullable();

/**
 * `PUT …/limits` (the app's and support's, and the console's form once read): each period a whole
 * number of tokens (0: nothing may be spent), null to remove the user's own limit (the default
 * applies), or left out to leave it as it is. Strict: a misspelt field is a 400, never ignored.
 */
export const spendLimitsBodySchema = z.strictObject({
  daily: limitValue.optional().describe('tokens per UTC day; null: the default (SPEND_LIMIT_DAILY); absent: unchanged'),
  monthly: limitValue
    .optional()
    .describe('tokens per calendar month (UTC); null: the default (SPEND_LIMIT_MONTHLY); absent: unchanged'),
});

const periodSchema = z.strictObject({
  limit: z.number().int().nullable().describe('the limit in force; null: none'),
  source: z.enum(['user', 'default', 'none']).describe("user: the user's own; default: SPEND_LIMIT_*; none"),
  spent: z.number().int().describe('tokens spent in the current period (debits, usage, captures, studio)'),
  resetsAt: z.string().describe('when the current period ends (ISO 8601, UTC)'),
});

export const spendLimitsAnswerSchema = z.strictObject({
  userId: z.string(),
  held: z.number().int().describe('what active holds reserve: it counts in both periods until they end'),
  daily: periodSchema.describe('the current UTC day'),
  monthly: periodSchema.describe('the current calendar month (UTC)'),
});

/** The limits' answer, `userId` as the caller spelt it. */
export function spendLimitsAnswerOf(view: SpendLimitsView, userId: string) {
  return { status: 200, body: { ...view, userId } satisfies z.input<typeof spendLimitsAnswerSchema> };
}
