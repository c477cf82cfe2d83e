import { adminSurfaces, listAdminActions } from '@tally/billing-core';
import { z } from 'zod';
import { defineRoute } from '../../http/define-route';
import { cursorSchema, limitSchema } from '../../http/params';
import { answerDoc, errorDoc, nextCursorSchema } from '../../http/route-doc';

const auditQuerySchema = z
  .strictObject({
    limit: limitSchema,
    cursor: cursorSchema,
    targetKind: z.string().min(1).max(100).optional(),
    targetId: z.string().min(1).max(255).optional(),
  })
  .refine((query) => (query.targetKind === undefined) === (query.targetId === undefined), {
    message: 'targetKind and targetId go together',
  });

const auditAnswerSchema = z.strictObject({
  actions: z.array(
    z.strictObject({
      id: z.number().int(),
      action: z.string(),
      surface: z.enum(adminSurfaces),
      target: z.strictObject({ kind: z.string(), id: z.string() }).nullable(),
      method: z.string().nullable(),
      path: z.string().nullable(),
      request: z.unknown(),
      keyFingerprint: z.string().nullable(),
      actor: z.string().nullable(),
      statusCode: z.number().int().nullable(),
      outcome: z.string(),
      answer: z.unknown(),
      createdAt: z.date(),
    }),
  ),
  nextCursor: nextCursorSchema,
});

/**
 * GET /admin/audit?limit&cursor&targetKind&targetId: operators' actions newest first
 * (`{actions, nextCursor}`), from every surface. Read-only: nothing here writes or removes a row.
 */
export const auditRoutes = [
  defineRoute({
    method: 'get',
    path: '/admin/audit',
    summary: "Operators' actions, newest first, from every surface",
    query: auditQuerySchema,
    answers: {
      200: answerDoc('a page of audit rows', auditAnswerSchema),
      400: errorDoc('a bad filter', ['invalid_request']),
    },
    handler: async ({ query }, { db }) => {
      const page = await listAdminActions(db, {
        limit: query.limit,
        beforeId: query.cursor,
        target:
          query.targetKind !== undefined && query.targetId !== undefined
            ? { kind: query.targetKind, id: query.targetId }
            : undefined,
      });
      const answer: z.input<typeof auditAnswerSchema> = {
        actions: page.actions,
        nextCursor: page.nextCursor === null ? null : String(page.nextCursor),
      };
      return { status: 200, body: answer };
    },
  }),
];
