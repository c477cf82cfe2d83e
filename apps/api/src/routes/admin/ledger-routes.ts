import { type LedgerVerification, verifyLedger } from '@tally/billing-core';
import { z } from 'zod';
import { defineRoute } from '../../http/define-route';
import { answerDoc } from '../../http/route-doc';

const verificationSchema = z.strictObject({
  ok: z.boolean(),
  walletsChecked: z.number().int(),
  entriesChecked: z.number().int(),
  discrepancies: z.array(
    z.strictObject({
      userId: z.string(),
      problem: z.enum([
        'balance_differs_from_sum',
        'broken_chain',
        'lot_remaining_out_of_bounds',
        'lots_differ_from_balance',
        'draws_differ_from_amount',
        'debt_differs_from_sources',
        'debt_settlements_differ_from_entries',
      ]),
      detail: z.string(),
    }),
  ),
});

/** `GET /admin/ledger/verify`: the ledger's money invariants, checked (read-only). */
export const ledgerAdminRoutes = [
  defineRoute({
    method: 'get',
    path: '/admin/ledger/verify',
    summary: "Check the ledger's money invariants (read-only)",
    answers: { 200: answerDoc('the verification (`ok: false` with what differs)', verificationSchema) },
    handler: async (_input, { db }) => {
      const result: LedgerVerification = await verifyLedger(db);
      return { status: 200, body: result satisfies z.input<typeof verificationSchema> };
    },
  }),
];
