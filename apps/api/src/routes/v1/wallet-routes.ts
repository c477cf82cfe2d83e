import { type DB, type LotView, listLedgerEntries, listLots, readWalletFunds } from '@tally/billing-core';
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
    const [funds, lots] = await Promise.all([
      readWalletFunds(deps.db, userId, { lock: false }),
      listLots(deps.db, userId),
    ]);
    res.json({
      userId: requestedId,
      balance: funds.balance,
      held: funds.held,
      available: funds.available,
      lots: lots.map(lotAnswerOf),
    });
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
        // A debit lists what it drew from each lot; a give-back what it returned (docs/lots.md).
        ...(entry.amount < 0 || entry.draws.length > 0 ? { draws: entry.draws } : {}),
      })),
      nextCursor: page.nextCursor === null ? null : String(page.nextCursor),
    });
  });

  return router;
}

/** A lot as the wallet answers it (docs/interface.md). */
export function lotAnswerOf(lot: LotView) {
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
