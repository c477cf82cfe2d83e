import type { AppControllerRoute, ControllerHandlerReturnType } from '@bull-board/api/typings/app';
import { ExpressAdapter } from '@bull-board/express';
import type { DB } from '@tally/billing-core';
import express, { type Request, type RequestHandler, type Response, Router } from 'express';
import type { Kysely } from 'kysely';
import { type AuditSpec, auditedHandler } from '../http/audit-admin-actions';

/** The dashboard actions the audit names, by `method route` as Bull Board declares them (`put /api/queues/…`). */
export type DashboardActions = Readonly<Record<string, Omit<AuditSpec, 'inTransaction'>>>;

/**
 * Bull Board's Express adapter with its API routes audited: each handler returns its answer
 * (`{status, body}`, Bull Board's own contract), so a state-changing one runs through
 * auditedHandler (a `started` row before it, the answer row before the answer is sent) and a
 * read is sent as Bull Board sends it. An action of `actions` is recorded under its name and
 * target; any other under its method and route. Only `setApiRoutes` differs from Bull Board's.
 */
export class AuditedExpressAdapter extends ExpressAdapter {
  constructor(private readonly audit: { db: Kysely<DB>; actions: DashboardActions }) {
    super();
  }

  override setApiRoutes(routes: AppControllerRoute[]): ExpressAdapter {
    const router = Router();
    router.use(express.json());
    for (const route of routes) {
      for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
        const handle = async (req: Request): Promise<ControllerHandlerReturnType> => {
          try {
            return await route.handler({
              queues: this.bullBoardQueues as NonNullable<typeof this.bullBoardQueues>,
              uiConfig: this.uiConfig || {},
              query: req.query,
              params: req.params,
              body: req.body,
              headers: req.headers as Record<string, string | undefined>,
            });
          } catch (error) {
            // Bull Board's error handler's answer (setErrorHandler), sent and recorded like any other.
            if (!this.errorHandler) throw error;
            return this.errorHandler(error as Error);
          }
        };
        const send = (res: Response, answer: ControllerHandlerReturnType) => {
          res.status(answer.status || 200).json(answer.body);
        };
        const handler: RequestHandler =
          method === 'get'
            ? async (req, res) => send(res, await handle(req))
            : auditedHandler(
                {
                  db: this.audit.db,
                  surface: 'dashboard',
                  spec: ([] as string[])
                    .concat(route.route)
                    .map((path) => this.audit.actions[`${method} ${path}`])
                    .find((spec) => spec !== undefined),
                  recordOf: (answer) => ({ statusCode: answer.status || 200, body: answer.body }),
                  send,
                },
                (req) => handle(req),
              );
        router[method](route.route, handler);
      }
    }
    this.app.use(router);
    return this;
  }
}
