import { type DB, findWallet, listLedgerEntries, resolveUserId } from '@tally/billing-core';
import { Router } from 'express';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { cursorSchema, limitSchema, parseOr400, userIdSchema } from '../../http/params';

const ledgerQuerySchema = z.object({ limit: limitSchema, cursor: cursorSchema });

export function createWalletRoutes(deps: { db: Kysely<DB> }): Router {
  const router = Router();

  router.get('/users/:userId/wallet', async (req, res) => {
    const userId = parseOr400(res, userIdSchema, req.params.userId);
    if (userId === undefined) return;
    // Any id linked to a user (an alias, an anonymous id) answers for that user.
    const wallet = await findWallet(deps.db, await resolveUserId(deps.db, userId));
    res.json({ userId, balance: wallet.balance });
  });

  router.get('/users/:userId/ledger', async (req, res) => {
    const userId = parseOr400(res, userIdSchema, req.params.userId);
    const query = parseOr400(res, ledgerQuerySchema, req.query);
    if (userId === undefined || query === undefined) return;
    const page = await listLedgerEntries(deps.db, await resolveUserId(deps.db, userId), {
      limit: query.limit,
      beforeId: query.cursor,
    });
    res.json({
      userId,
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
