import type { GrantResult } from '@tally/billing-core';
import { z } from 'zod';
import { errorAnswer, type RouteAnswer } from './answer';
import { type AnswerDoc, answerDoc, errorDoc } from './route-doc';

/** A grant's reference: 1 to 200 characters of `A-Z a-z 0-9 . _ : -` (docs/interface.md). */
export const grantReferenceSchema = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,200}$/, { message: 'must be 1 to 200 characters of A-Z a-z 0-9 . _ : -' });

/** The largest grant in one request. */
export const maxGrantAmount = 1_000_000_000;

const reasonSchema = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,64}$/, { message: 'must be 1 to 64 characters of A-Z a-z 0-9 . _ : -' });

/** An ISO time after now (checked when the request is parsed). */
// guard: grant-expiry-future
const futureTimeSchema = z
  .string()
  .datetime({ offset: true })
  .transform((value) => new Date(value))
  .refine((time) => time.getTime() > Date.now(), { message: 'must be in the future' });

const grantFields = {
  amount: z.number().int().positive().max(maxGrantAmount),
  reason: reasonSchema.optional(),
  expiresAt: futureTimeSchema.nullish(),
  settlesDebt: z
    .boolean()
    .optional()
    .describe("settle the wallet's debt first from this grant, as a paid credit does (default false: docs/debt.md)"),
};

/** `POST /v1/users/{userId}/grants`. */
// guard: grant-body-strict
export const grantBodySchema = z.strictObject({ ...grantFields, reference: grantReferenceSchema });

/** `POST /admin/users/{userId}/grants`: the reference is optional (one is generated), plus a note. */
export const adminGrantBodySchema = z.strictObject({
  ...grantFields,
  reference: grantReferenceSchema.optional(),
  note: z
    .string()
    .max(1000)
    .refine((note) => !note.includes('\u0000'), { message: 'must not contain NUL' })
    .optional(),
});

/** What a grant answers (201, or 200 for the same grant again). */
export const grantAnswerSchema = z.strictObject({
  ledgerReference: z.string(),
  lotId: z.number().int(),
  amount: z.number().int(),
  expiresAt: z.iso.datetime().nullable(),
  balance: z.number().int().describe('the balance right after the grant and what it settled (the same on every retry)'),
  debtSettled: z.number().int().describe("what of the grant settled the wallet's debt (0 without settlesDebt)"),
});

/** The answers of a grant route, for its definition. */
export const grantAnswerDocs = {
  201: answerDoc('granted: one promotional lot', grantAnswerSchema),
  200: answerDoc('the same grant was made before: nothing granted now, its first answer', grantAnswerSchema),
  400: errorDoc('a bad body or user id', ['invalid_request']),
  409: errorDoc('the reference granted another amount, expiry or user', ['reference_conflict']),
} satisfies Record<number, AnswerDoc>;

/** The HTTP answer of a grant: 201 granted, 200 the same grant before, 409 reference_conflict. */
export function grantAnswerOf(result: GrantResult): RouteAnswer {
  if (result.kind === 'conflict') return errorAnswer(409, 'reference_conflict', result.message);
  return {
    // guard: grant-status-repeat
    status: result.kind === 'granted' ? 201 : 200,
    body: result.answer satisfies z.input<typeof grantAnswerSchema>,
  };
}
