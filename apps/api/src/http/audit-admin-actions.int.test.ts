import type { AddressInfo } from 'node:net';
import { adminActions, keyFingerprint } from '@tally/billing-core';
import { createTestDatabase, type TestDatabase } from '@tally/billing-core/testing';
import express, { type NextFunction, type Request, type Response } from 'express';
import { type RouteAnswer, sendAnswer } from './answer';
import { auditedHandler, auditUnmatched } from './audit-admin-actions';

/**
 * The audit of HTTP admin actions without a patched response: the handler returns its answer and
 * the audit writes the rows around it. The e2e suites (console, grants, hold surfaces) cover each
 * action's rows; this file covers what no action route reaches.
 */
describe('auditedHandler and auditUnmatched record every state-changing admin request', () => {
  let database: TestDatabase;
  let base: string;
  let server: ReturnType<express.Express['listen']>;
  const key = 'admin-key-for-audit';
  beforeAll(async () => {
    database = await createTestDatabase();
    const admin = express.Router();
    admin.post(
      '/things/:id/break',
      auditedHandler<RouteAnswer>(
        {
          db: database.db,
          surface: 'api',
          spec: { action: adminActions.reconcileStripe, target: { kind: 'thing', param: 'id' } },
          recordOf: (answer) => ({ statusCode: answer.status, body: answer.body }),
          send: sendAnswer,
        },
        async () => {
          throw new Error('the action failed half way');
        },
      ),
    );
    admin.use(auditUnmatched(database.db, 'api'));
    const app = express();
    app.use(express.json());
    app.use('/admin', admin);
    app.use((_error: unknown, _req: Request, res: Response, _next: NextFunction) => {
      res.status(500).json({ error: { code: 'internal_error', message: 'internal error' } });
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await database.drop();
  });

  const rows = () =>
    database.db
      .selectFrom('admin_audit')
      .select([
        'action',
        'target_kind',
        'target_id',
        'path',
        'request',
        'key_fingerprint',
        'status_code',
        'outcome',
        'answer',
      ])
      .orderBy('id')
      .execute();
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  /** An action's two audit rows: started before it ran, then its answer (the error's code is the outcome). */
  const startedThenAnswered = (
    identity: Record<string, unknown>,
    statusCode: number,
    answer: { error: { code: string; message: string } },
  ) => [
    { ...identity, status_code: null, outcome: 'started', answer: null },
    { ...identity, status_code: statusCode, outcome: answer.error.code, answer },
  ];

  it('records a POST no route took (started, then its 404) under its method and path; a GET is not an action', async () => {
    const before = (await rows()).length;
    const response = await call('POST', '/admin/nothing/here', { all: true });
    expect([response.status, await response.json()]).toEqual([
      404,
      { error: { code: 'not_found', message: 'no such route' } },
    ]);
    expect((await call('GET', '/admin/nothing/here')).status).toBe(404);
    const identity = {
      action: 'POST /admin/nothing/here',
      target_kind: null,
      target_id: null,
      path: '/admin/nothing/here',
      request: { params: {}, body: { all: true } },
      key_fingerprint: keyFingerprint(key),
    };
    expect((await rows()).slice(before)).toEqual(
      startedThenAnswered(identity, 404, { error: { code: 'not_found', message: 'no such route' } }),
    );
  });

  it('records the answer of an action that threw as the error handlers give it, after its started row', async () => {
    const before = (await rows()).length;
    const response = await call('POST', '/admin/things/7/break');
    expect(response.status).toBe(500);
    const identity = {
      action: 'reconcile.stripe',
      target_kind: 'thing',
      target_id: '7',
      path: '/admin/things/7/break',
      request: { params: { id: '7' } },
      key_fingerprint: keyFingerprint(key),
    };
    expect((await rows()).slice(before)).toEqual(
      startedThenAnswered(identity, 500, { error: { code: 'internal_error', message: 'internal error' } }),
    );
  });
});
