import {
  type LotView,
  listLedgerEntries,
  listLots,
  lotCategories,
  readDebt,
  readWalletFunds,
} from '@tally/billing-core';
import { z } from 'zod';
import { defineRoute } from '../../http/define-route';
import { cursorSchema, limitSchema } from '../../http/params';
import { answerDoc, errorDoc, nextCursorSchema } from '../../http/route-doc';

const ledgerQuerySchema = z.strictObject({ limit: limitSchema, cursor: cursorSchema });

/** A lot as the wallet (and the grant) answers it (docs/lots.md). */
export const lotAnswerSchema = z.strictObject({
  id: z.number().int(),
  category: z.enum(lotCategories),
  source: z.string(),
  amount: z.number().int(),
  remaining: z.number().int(),
  held: z.number().int().describe('what active holds reserve of this lot (docs/holds.md)'),
  expiresAt: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
});

const walletAnswerSchema = z.strictObject({
  userId: z.string(),
  balance: z.number().int(),
  held: z.number().int().describe('the sum of active holds'),
  available: z.number().int().describe('balance - held: what debits, studio requests and new holds can use'),
  debt: z
    .number()
    .int()
    .describe(
      'tokens owed: what take-backs and priced captures could not take; the next paid credit settles it (docs/debt.md)',
    ),
  lots: z.array(lotAnswerSchema),
});

const ledgerAnswerSchema = z.strictObject({
  userId: z.string(),
  entries: z.array(
    z.strictObject({
      reference: z.string(),
      amount: z.number().int(),
      balanceBefore: z.number().int(),
      balanceAfter: z.number().int(),
      reason: z.string(),
      createdAt: z.iso.datetime(),
      draws: z
        .array(z.strictObject({ lotId: z.number().int(), amount: z.number().int() }))
        .optional()
        .describe('what a debit drew from each lot, or what a give-back returned'),
    }),
  ),
  nextCursor: nextCursorSchema,
});

/** `GET /v1/users/{userId}/wallet` and `/ledger`. */
export const walletRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/users/{userId}/wallet',
    // guard: wallet-route-summary
    summary: "The user's balance and its lots",
    answers: { 200: answerDoc('the wallet (balance 0 and no lots for a user never seen)', walletAnswerSchema) },
    handler: async ({ user }, { db }) => {
      const [funds, lots, debt] = await Promise.all([
        readWalletFunds(db, user.userId, { lock: false }),
        listLots(db, user.userId),
        readDebt(db, user.userId),
      ]);
      const answer: z.input<typeof walletAnswerSchema> = {
        userId: user.requestedId,
        balance: funds.balance,
        held: funds.held,
        available: funds.available,
        debt,
        lots: lots.map(lotAnswerOf),
      };
      return { status: 200, body: answer };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/users/{userId}/ledger',
    summary: "The user's ledger, newest first",
    query: ledgerQuerySchema,
    answers: {
      200: answerDoc('a page of entries', ledgerAnswerSchema),
      400: errorDoc('a bad limit or cursor', ['invalid_request']),
    },
    handler: async ({ user, query }, { db }) => {
      const page = await listLedgerEntries(db, user.userId, { limit: query.limit, beforeId: query.cursor });
      const answer: z.input<typeof ledgerAnswerSchema> = {
        userId: user.requestedId,
        entries: page.entries.map((entry) => ({
          reference: entry.reference,
          amount: entry.amount,
          balanceBefore: entry.balance_before,
          balanceAfter: entry.balance_after,
          reason: entry.reason,
          createdAt: entry.created_at.toISOString(),
          // A debit lists what it drew from each lot; a give-back what it returned (docs/lots.md).
          ...(entry.amount < 0 || entry.draws.length > 0 ? { draws: entry.draws } : {}),
        })),
        nextCursor: page.nextCursor === null ? null : String(page.nextCursor),
      };
      return { status: 200, body: answer };
    },
  }),
];

/** A lot as the wallet answers it (docs/interface.md). */
export function lotAnswerOf(lot: LotView): z.input<typeof lotAnswerSchema> {
  return {
    id: lot.id,
    category: lot.category,
    source: lot.source,
    amount: lot.amount,
    remaining: lot.remaining,
    held: lot.held,
    expiresAt: lot.expiresAt?.toISOString() ?? null,
    createdAt: lot.createdAt.toISOString(),
  };
}
