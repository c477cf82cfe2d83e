import { z } from 'zod';
import type { RouteAnswer } from '../../http/answer';
import { maxGrantAmount } from '../../http/grant-body';
import { answerDoc } from '../../http/route-doc';

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
