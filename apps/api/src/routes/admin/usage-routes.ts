import { reportUsage } from '@tally/billing-core';
import { z } from 'zod';
import { defineRoute } from '../../http/define-route';
import { answerDoc, errorDoc } from '../../http/route-doc';
import { usageDaySchema, usageRangeSchema } from '../v1/usage-routes';

/** `GET /admin/usage`: uses per UTC day and feature across users (docs/features.md "Reports"). */
export const usageAdminRoutes = [
  defineRoute({
    method: 'get',
    path: '/admin/usage',
    summary: 'Uses per UTC day and feature across users, with the distinct users of each',
    query: usageRangeSchema.safeExtend({ feature: z.string().min(1).max(64).optional() }),
    answers: {
      200: answerDoc('the days with uses', z.strictObject({ days: z.array(usageDaySchema) })),
      400: errorDoc('a bad date, from after to, or more than 366 days', ['invalid_request']),
    },
    handler: async ({ query }, { db }) => {
      const days = await reportUsage(db, { userId: null, from: query.from, to: query.to, feature: query.feature });
      return { status: 200, body: { days } };
    },
  }),
];
