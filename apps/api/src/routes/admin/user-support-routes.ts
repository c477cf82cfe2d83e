import { findUserSupportView } from '@tally/billing-core';
import { z } from 'zod';
import { defineRoute } from '../../http/define-route';
import { userIdSchema } from '../../http/params';
import { answerDoc, errorDoc } from '../../http/route-doc';

const supportQuerySchema = z.strictObject({
  eventLimit: z.coerce.number().int().min(1).max(1_000).default(100),
  ledgerLimit: z.coerce.number().int().min(1).max(1_000).default(100),
  studioLimit: z.coerce.number().int().min(1).max(1_000).default(50),
  historyLimit: z.coerce.number().int().min(1).max(1_000).default(50),
  holdLimit: z.coerce.number().int().min(1).max(1_000).default(50),
});

/** A section described by its fields' names only (docs/operations.md has each section's shape). */
const section = z.looseObject({});

/**
 * The support view (billing-core's UserSupportView): its sections are listed here; the fields of
 * each are in docs/operations.md and billing-core/src/support/user-support-view.ts.
 */
const supportViewSchema = z.strictObject({
  userId: z.string(),
  canonicalUserId: z.string(),
  wallet: z.looseObject({
    balance: z.number().int(),
    held: z.number().int(),
    available: z.number().int(),
    lots: z.array(section),
    debt: z.number().int().describe('tokens owed (docs/debt.md)'),
    debts: z.array(section).describe('what made the debt and what settled it, oldest first'),
  }),
  holds: z.looseObject({ activeTotal: z.number().int(), items: z.array(section) }),
  events: z.looseObject({ items: z.array(section), total: z.number().int(), truncated: z.boolean() }),
  ledger: z.looseObject({ entries: z.array(section), total: z.number().int(), truncated: z.boolean() }),
  subscription: section.nullable(),
  payments: z.array(section),
  refunds: z.array(section),
  disputes: z.array(section),
  topups: z.array(section),
  installments: z.array(section),
  studioRequests: z.looseObject({ items: z.array(section) }),
  linkedIds: z.array(section),
});

/**
 * GET /admin/users/{userId}: everything support needs about one user, in one call (the shape is
 * in docs/operations.md; dates are ISO strings). `tally user <id> --json` prints the same.
 */
export const userSupportRoutes = [
  defineRoute({
    method: 'get',
    path: '/admin/users/{userId}',
    summary: 'Everything support needs about one user, in one call',
    params: { userId: userIdSchema },
    query: supportQuerySchema,
    answers: {
      200: answerDoc('the support view (an empty one for a user never seen)', supportViewSchema),
      400: errorDoc('a bad user id or limit', ['invalid_request']),
    },
    handler: async ({ params, query }, { db }) => {
      const view = await findUserSupportView(db, params.userId, {
        limits: {
          events: query.eventLimit,
          ledgerEntries: query.ledgerLimit,
          studioRequests: query.studioLimit,
          subscriptionHistory: query.historyLimit,
          holds: query.holdLimit,
        },
      });
      // The sections are described by name (supportViewSchema): the view has each of them.
      return { status: 200, body: view satisfies Record<keyof z.input<typeof supportViewSchema>, unknown> };
    },
  }),
];
