import { type SpendLimitRefusal, spendPeriods } from '@tally/billing-core';
import { z } from 'zod';
import { errorAnswer, type RouteAnswer } from '../../http/answer';
import { maxGrantAmount } from '../../http/grant-body';
import { type AnswerDoc, answerDoc } from '../../http/route-doc';

/** What the app says a debit or hold is for: 1 to 64 characters of `A-Z a-z 0-9 . _ : -`. */
export const reasonSchema = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,64}$/, { message: 'must be 1 to 64 characters of A-Z a-z 0-9 . _ : -' });
export const amountSchema = z.number().int().positive().max(maxGrantAmount);

const insufficientSchema = z.strictObject({
  error: z.strictObject({ code: z.literal('insufficient_balance'), message: z.string() }),
  available: z.number().int(),
});
export const insufficientDoc = answerDoc('available is short (its figure in the answer)', insufficientSchema);

/** The 402 of a debit or hold that `available` cannot cover. */
export function insufficientAnswer(available: number, requested: number): RouteAnswer {
  return {
    status: 402,
    body: {
      error: {
        code: 'insufficient_balance',
        message: `${requested} tokens requested and the wallet has ${available} available`,
      },
      available,
    } satisfies z.input<typeof insufficientSchema>,
  };
}

/** A feature, variant or meter name as the body names it (the catalog checks it exists). */
export const featureNameSchema = z.string().min(1).max(64);
/** A quantity of a meter: a whole number of zero or more. */
export const quantitySchema = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const quantitiesSchema = z.record(featureNameSchema, quantitySchema);

/** The 400 of an unknown feature, variant or meter, naming the known ones (docs/features.md). */
export function unknownFeatureAnswer(refusal: { message: string; known: readonly string[] }): RouteAnswer {
  const known = refusal.known.length > 0 ? `; known: ${refusal.known.join(', ')}` : '';
  return errorAnswer(400, 'unknown_feature', `${refusal.message}${known}`);
}

const spendLimitSchema = z.strictObject({
  error: z.strictObject({ code: z.literal('spend_limit_reached'), message: z.string() }),
  period: z.enum(spendPeriods).describe('daily: the UTC day; monthly: the calendar month (UTC)'),
  limit: z.number().int(),
  spent: z.number().int().describe('tokens spent in the period (debits, usage, captures, studio)'),
  held: z.number().int().describe('what active holds reserve: it counts until they end'),
  requested: z.number().int(),
  resetsAt: z.string().describe('when the period ends and its count starts again (ISO 8601, UTC)'),
});

/** A spend's 402: `short` (available is short), or a spend limit reached (docs/spend-limits.md). */
export function orSpendLimitDoc(short: AnswerDoc): AnswerDoc {
  return answerDoc(
    `${short.description}; or spend_limit_reached: spent + held + this spend would pass the daily or monthly limit (nothing spent)`,
    z.union([short.schema, spendLimitSchema]),
  );
}

/** The 402 of a spend a limit refuses. */
export function spendLimitAnswer(refusal: SpendLimitRefusal): RouteAnswer {
  const { period, limit, spent, held, requested, resetsAt } = refusal;
  return {
    status: 402,
    body: {
      error: {
        code: 'spend_limit_reached',
        message: `the ${period} spend limit of ${limit} tokens is reached: ${spent} spent and ${held} held, ${requested} requested; it resets at ${resetsAt}`,
      },
      period,
      limit,
      spent,
      held,
      requested,
      resetsAt,
    } satisfies z.input<typeof spendLimitSchema>,
  };
}

/**
 * The refusals a spend under the app's reference answers alike (a debit, a hold, a usage): 409
 * reference_conflict when the reference did something else, 402 insufficient_balance when
 * available is short of what was requested, 402 spend_limit_reached past a spend limit.
 */
export type SpendRefusal =
  | { kind: 'conflict'; message: string }
  | { kind: 'insufficient'; available: number; requested: number }
  | { kind: 'spend-limit'; refusal: SpendLimitRefusal };

export function spendRefusalAnswer(refusal: SpendRefusal): RouteAnswer {
  switch (refusal.kind) {
    case 'conflict':
      return errorAnswer(409, 'reference_conflict', refusal.message);
    case 'insufficient':
      return insufficientAnswer(refusal.available, refusal.requested);
    case 'spend-limit':
      return spendLimitAnswer(refusal.refusal);
  }
}
