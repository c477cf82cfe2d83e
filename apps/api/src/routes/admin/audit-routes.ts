import { type DB, listAdminActions } from '@tally/billing-core';
import { Router } from 'express';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { cursorSchema, limitSchema, parseOr400 } from '../../http/params';

const auditQuerySchema = z
  .object({
    limit: limitSchema,
    cursor: cursorSchema,
    targetKind: z.string().min(1).max(100).optional(),
    targetId: z.string().min(1).max(255).optional(),
  })
  .refine((query) => (query.targetKind === undefined) === (query.targetId === undefined), {
    message: 'targetKind and targetId go together',
  });

/**
 * GET /admin/audit?limit&cursor&targetKind&targetId: operators' actions newest first
 * (`{actions, nextCursor}`), from every surface. Read-only: nothing here writes or removes a row.
 */
export function createAuditRoutes(deps: { db: Kysely<DB> }): Router {
  const router = Router();
  router.get('/audit', async (req, res) => {
    const query = parseOr400(res, auditQuerySchema, req.query);
    if (query === undefined) return;
    const page = await listAdminActions(deps.db, {
      limit: query.limit,
      beforeId: query.cursor,
      target:
        query.targetKind !== undefined && query.targetId !== undefined
          ? { kind: query.targetKind, id: query.targetId }
          : undefined,
    });
    res.json({ actions: page.actions, nextCursor: page.nextCursor === null ? null : String(page.nextCursor) });
  });
  return router;
}
