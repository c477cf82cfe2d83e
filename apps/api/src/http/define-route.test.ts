import type { AddressInfo } from 'node:net';
import type { IdempotencyClaim } from '@tally/billing-core';
import express, { type RequestHandler } from 'express';
import { z } from 'zod';
import { buildOpenApiDocument } from '../openapi/openapi-document';
import { adminRoutes, apiRoutes, userRoutes } from '../routes/api-routes';
import { defineRoute, type Route } from './define-route';
import type { IdempotentPosts } from './idempotency';
import { mountRoutes } from './mount-routes';
import { answerDoc, errorDoc } from './route-doc';
import type { RouteServices } from './route-services';

// The mount never reaches these routes' services or database: their handlers use none.
const services = {} as RouteServices;
const unusedIdempotency: IdempotentPosts = {
  claimed: () => () => {
    throw new Error('not an idempotent route');
  },
  inTransaction: () => () => {
    throw new Error('not an idempotent route');
  },
};

/** Serves `mount` on 127.0.0.1 for one call of `run`. */
async function served(mount: (app: express.Express) => void, run: (base: string) => Promise<void>) {
  const app = express();
  app.use(express.json());
  mount(app);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

const partRoute = defineRoute({
  method: 'get',
  path: '/admin/things/{thingId}/parts/{part}',
  summary: 'One part of one thing',
  params: {
    thingId: z
      .string()
      .regex(/^[0-9]+$/, { message: 'must be digits' })
      .transform(Number),
    part: z.string(),
  },
  query: z.strictObject({ limit: z.coerce.number().int().default(5) }),
  answers: {
    200: answerDoc('the part', z.strictObject({ thingId: z.number(), part: z.string(), limit: z.number() })),
    400: errorDoc('a bad id', ['invalid_request']),
  },
  handler: async ({ params, query }) => ({ status: 200, body: { ...params, limit: query.limit } }),
});

describe('a route defined once (defineRoute): the router and the document are made from the definition', () => {
  it('mounts a definition with path parameters at its Express path, its input parsed by its schemas', async () => {
    await served(
      (app) =>
        app.use('/admin', mountRoutes([partRoute], { services, idempotency: unusedIdempotency, db: {} as never })),
      async (base) => {
        const found = await fetch(`${base}/admin/things/42/parts/wheel?limit=3`);
        expect([found.status, await found.json()]).toEqual([200, { thingId: 42, part: 'wheel', limit: 3 }]);
        const badId = await fetch(`${base}/admin/things/x/parts/wheel`);
        expect([badId.status, await badId.json()]).toEqual([
          400,
          { error: { code: 'invalid_request', message: 'must be digits' } },
        ]);
        const badQuery = await fetch(`${base}/admin/things/1/parts/wheel?limt=3`);
        expect([badQuery.status, await badQuery.json()]).toEqual([
          400,
          { error: { code: 'invalid_request', message: 'unknown parameter "limt"' } },
        ]);
      },
    );
  });

  it('puts the same definition in the OpenAPI document, its parameters and answers with it', () => {
    const document = buildOpenApiDocument([partRoute]);
    const operation = document.paths?.['/admin/things/{thingId}/parts/{part}']?.get;
    expect(Object.keys(document.paths ?? {})).toEqual(['/admin/things/{thingId}/parts/{part}']);
    expect(operation?.summary).toBe('One part of one thing');
    expect(operation?.parameters).toEqual([
      expect.objectContaining({ in: 'path', name: 'thingId', required: true }),
      expect.objectContaining({ in: 'path', name: 'part', required: true }),
      expect.objectContaining({ in: 'query', name: 'limit' }),
    ]);
    expect(Object.keys(operation?.responses ?? {})).toEqual(['200', '400', '401', '429', '500', '503']);
  });

  it('gives an idempotent POST the claim the mount takes for it, and a POST without a body schema refuses fields', async () => {
    const wrapped: string[] = [];
    const claim = { userId: 'u1', key: 'k1' } as unknown as IdempotencyClaim;
    const idempotency: IdempotentPosts = {
      // Stands in for createIdempotentPosts: claims before the handler runs, sends what it returns.
      claimed: (handler) => async (req, res) => {
        wrapped.push(`${req.method} ${req.originalUrl}`);
        const answer = await handler(req, res, claim);
        res.status(answer.status).json(answer.body);
      },
      inTransaction: unusedIdempotency.inTransaction,
    };
    const seen: unknown[] = [];
    const ping = defineRoute({
      method: 'post',
      path: '/v1/users/{userId}/pings',
      summary: 'A ping',
      idempotency: 'claimed',
      answers: { 201: answerDoc('pinged', z.strictObject({ ok: z.boolean() })) },
      handler: async (input) => {
        seen.push({ claim: input.claim, user: input.user });
        return { status: 201, body: { ok: true } };
      },
    });
    const scope: RequestHandler = (req, res, next) => {
      res.locals.userScope = { userId: 'canonical', requestedId: String(req.params.userId) };
      next();
    };
    await served(
      (app) => app.use('/v1/users/:userId', scope, mountRoutes([ping], { services, idempotency, db: {} as never })),
      async (base) => {
        const post = (body: unknown) =>
          fetch(`${base}/v1/users/alias/pings`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
        const pinged = await post({});
        expect([pinged.status, await pinged.json()]).toEqual([201, { ok: true }]);
        const refused = await post({ now: 1 });
        expect([refused.status, await refused.json()]).toEqual([
          400,
          { error: { code: 'invalid_request', message: 'unknown field "now"' } },
        ]);
      },
    );
    expect(wrapped).toEqual(['POST /v1/users/alias/pings', 'POST /v1/users/alias/pings']);
    expect(seen).toEqual([{ claim, user: { userId: 'canonical', requestedId: 'alias' } }]);
    const document = buildOpenApiDocument([ping]);
    expect(document.paths?.['/v1/users/{userId}/pings']?.post?.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ in: 'header', name: 'Idempotency-Key' })]),
    );
  });

  it('refuses, when its module loads, a definition that contradicts itself or forgets what its surface needs', () => {
    const answers = { 200: answerDoc('ok', z.strictObject({})) };
    const handler = async () => ({ status: 200, body: {} });
    expect(() =>
      defineRoute({ method: 'get', path: '/admin/things/{thingId}', summary: 's', answers, handler }),
    ).toThrow("GET /admin/things/{thingId}: its params () are not its path's {thingId}");
    expect(() =>
      defineRoute({
        method: 'get',
        path: '/admin/things',
        summary: 's',
        params: { thingId: z.string() },
        answers,
        handler,
      }),
    ).toThrow('its params (thingId) are not its path');
    expect(() =>
      defineRoute({ method: 'post', path: '/v1/users/{userId}/grants', summary: 's', answers, handler }),
    ).toThrow('POST /v1/users/{userId}/grants does not say how it takes Idempotency-Key');
    expect(() => defineRoute({ method: 'post', path: '/admin/grants', summary: 's', answers, handler })).toThrow(
      'POST /admin/grants does not say what it audits',
    );
    expect(() =>
      defineRoute({ method: 'get', path: '/admin/things', summary: 's', idempotency: 'claimed', answers, handler }),
    ).toThrow('only a /v1 POST takes Idempotency-Key');
  });

  it('lists every /v1 and /admin route once, each POST with its Idempotency-Key or its audit', () => {
    const keys = apiRoutes.map((route: Route) => `${route.method} ${route.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(userRoutes.every((route) => route.path.startsWith('/v1/users/{userId}/'))).toBe(true);
    expect(adminRoutes.every((route) => route.path.startsWith('/admin/'))).toBe(true);
    for (const route of apiRoutes.filter((route) => route.method === 'post')) {
      expect([route.path, route.idempotency ?? route.audit?.action]).toEqual([route.path, expect.any(String)]);
    }
  });
});
