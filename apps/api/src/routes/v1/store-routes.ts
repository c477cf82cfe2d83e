import { readStoreAccounts, recordStoreConsent } from '@tally/billing-core';
import { z } from 'zod';
import { defineRoute } from '../../http/define-route';
import { answerDoc, errorDoc } from '../../http/route-doc';

const accountsAnswerSchema = z.strictObject({
  userId: z.string(),
  appleAppAccountToken: z
    .string()
    .describe("pass it to StoreKit as the purchase's appAccountToken: Apple's notifications name the user by it"),
  googleObfuscatedAccountId: z
    .string()
    .describe("pass it to Play Billing (setObfuscatedAccountId): Google's purchases name the user by it"),
});

const consentBodySchema = z.strictObject({
  consented: z.boolean().describe('whether the user agreed, in the app, that Tally sends Apple consumption data'),
});

const consentAnswerSchema = z.strictObject({
  userId: z.string(),
  consented: z.boolean(),
  updatedAt: z.string().nullable(),
});

/**
 * The stores, directly (docs/stores.md): the ids the app passes to StoreKit and Play Billing so
 * the stores' notifications name the user (made on the first read, never changed), and the user's
 * consent to Apple consumption data (without it Tally sends none).
 */
export const storeRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/users/{userId}/store-accounts',
    summary: 'The ids the app passes to StoreKit (appAccountToken) and Play Billing (obfuscatedAccountId)',
    answers: { 200: answerDoc('the ids (made on the first read, never changed)', accountsAnswerSchema) },
    handler: async ({ user }, { db }) => ({
      status: 200,
      body: { ...(await readStoreAccounts(db, user.userId)), userId: user.requestedId } satisfies z.input<
        typeof accountsAnswerSchema
      >,
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/users/{userId}/store-consent',
    summary: "Record the user's consent to send Apple consumption data for their refund requests",
    body: consentBodySchema,
    idempotency: 'claimed',
    answers: {
      200: answerDoc('recorded (the latest answer stands)', consentAnswerSchema),
      400: errorDoc('a bad body', ['invalid_request']),
    },
    handler: async ({ user, body }, { db }) => ({
      status: 200,
      body: {
        ...(await recordStoreConsent(db, user.userId, body.consented)),
        userId: user.requestedId,
      } satisfies z.input<typeof consentAnswerSchema>,
    }),
  }),
];
