import type { DB } from '@tally/billing-core';
import { Router } from 'express';
import type { Kysely } from 'kysely';
import { createApiMetrics } from '../api-metrics';
import { createIdempotentPosts } from './idempotency';

describe('Idempotency-Key: every /v1 POST route takes it', () => {
  // The check reads the routers only: no request is made, the database is never used.
  const idempotency = createIdempotentPosts({
    db: {} as Kysely<DB>,
    metrics: createApiMetrics(),
    lockTimeoutMs: 60_000,
  });

  it('accepts routers whose POSTs are all wrapped (claimed or inTransaction), whatever their GETs', () => {
    const router = Router();
    router.get('/things', (_req, res) => void res.json([]));
    router.post(
      '/things',
      idempotency.claimed(async () => ({ status: 201, body: {} })),
    );
    router.post(
      '/things/:id/parts',
      idempotency.inTransaction(async () => ({ status: 202, body: {} })),
    );
    expect(() => idempotency.requireEveryPost([router])).not.toThrow();
  });

  it('refuses, at start, a POST route a new router added without the wrapper: its retries would run twice', () => {
    const wrapped = Router();
    wrapped.post(
      '/ok',
      idempotency.claimed(async () => ({ status: 200, body: {} })),
    );
    const forgotten = Router();
    forgotten.post('/grants', async (_req, res) => void res.status(201).json({}));
    expect(() => idempotency.requireEveryPost([wrapped, forgotten])).toThrow(
      'POST /grants does not take Idempotency-Key: wrap its handler in idempotency.claimed or idempotency.inTransaction',
    );
  });
});
