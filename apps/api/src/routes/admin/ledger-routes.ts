import { type DB, verifyLedger } from '@tally/billing-core';
import { Router } from 'express';
import type { Kysely } from 'kysely';

export function createLedgerAdminRoutes(deps: { db: Kysely<DB> }): Router {
  const router = Router();
  router.get('/ledger/verify', async (_req, res) => {
    const result = await verifyLedger(deps.db);
    res.json(result);
  });
  return router;
}
