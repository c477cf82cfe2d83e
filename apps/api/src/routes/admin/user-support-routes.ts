import { type DB, findUserSupportView } from '@tally/billing-core';
import { Router } from 'express';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { parseOr400, userIdSchema } from '../../http/params';

const supportQuerySchema = z.object({
  eventLimit: z.coerce.number().int().min(1).max(1_000).default(100),
  ledgerLimit: z.coerce.number().int().min(1).max(1_000).default(100),
  studioLimit: z.coerce.number().int().min(1).max(1_000).default(50),
  historyLimit: z.coerce.number().int().min(1).max(1_000).default(50),
  holdLimit: z.coerce.number().int().min(1).max(1_000).default(50),
});

/**
 * GET /admin/users/{userId}: everything support needs about one user, in one call (the shape is
 * in docs/operations.md; dates are ISO strings). `tally user <id> --json` prints the same.
 */
export function createUserSupportRoutes(deps: { db: Kysely<DB> }): Router {
  const router = Router();
  router.get('/users/:userId', async (req, res) => {
    const userId = parseOr400(res, userIdSchema, req.params.userId);
    const query = parseOr400(res, supportQuerySchema, req.query);
    if (userId === undefined || query === undefined) return;
    const view = await findUserSupportView(deps.db, userId, {
      limits: {
        events: query.eventLimit,
        ledgerEntries: query.ledgerLimit,
        studioRequests: query.studioLimit,
        subscriptionHistory: query.historyLimit,
        holds: query.holdLimit,
      },
    });
    res.json(view);
  });
  return router;
}
