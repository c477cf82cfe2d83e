import { type DB, findWallet, listLedgerEntries } from '@tally/billing-core';
import { Router } from 'express';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { cursorSchema, limitSchema, parseOr400 } from '../../http/params';
import { userScopeOf } from '../../http/user-scope';

const ledgerQuerySchema = z.object({ limit: limitSchema, cursor: cursorSchema });

/** `GET /v1/users/{userId}/wallet` and `/ledger`; mounted by createUserRoutes (paths relative to the user). */
export function createWalletRoutes(deps: { db: Kysely<DB> }): Router {
  const router = Router();

  router.get('/wallet', async (_req, res) => {
    const { userId, requestedId } = userScopeOf(res);
    const wallet = await findWallet(deps.db, userId);
    res.json({ userId: requestedId, balance: wallet.balance });
  });

  router.get('/ledger', async (req, res) => {
    const { userId, requestedId } = userScopeOf(res);
    const query = parseOr400(res, ledgerQuerySchema, req.query);
    if (query === undefined) return;
    const page = await listLedgerEntries(deps.db, userId, { limit: query.limit, beforeId: query.cursor });
    res.json({
      userId: requestedId,
      entries: page.entries.map((entry) => ({
        reference: entry.reference,
        amount: entry.amount,
        balanceBefore: entry.balance_before,
        balanceAfter: entry.balance_after,
        reason: entry.reason,
        createdAt: entry.created_at.toISOString(),
      })),
      nextCursor: page.nextCursor === null ? null : String(page.nextCursor),
    });
  });

  return router;
}
