import { type DB, type LedgerVerification, verifyLedger } from '@tally/billing-core';
import { Router } from 'express';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { answerDoc, type RouteDoc } from '../../http/route-doc';

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
      ]),
      detail: z.string(),
    }),
  ),
});

export const ledgerAdminRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/admin/ledger/verify',
    summary: "Check the ledger's money invariants (read-only)",
    answers: { 200: answerDoc('the verification (`ok: false` with what differs)', verificationSchema) },
  },
];

export function createLedgerAdminRoutes(deps: { db: Kysely<DB> }): Router {
  const router = Router();
  router.get('/ledger/verify', async (_req, res) => {
    const result: LedgerVerification = await verifyLedger(deps.db);
    res.json(result satisfies z.input<typeof verificationSchema>);
  });
  return router;
}
