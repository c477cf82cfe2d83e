// The bench is plain JS at the repository root, which depends on nothing but autocannon: the
// workspace's own copies of pg, express, bullmq, ioredis, stripe and standardwebhooks are loaded through the
// packages that depend on them, so the baselines run exactly the library versions Tally runs.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const fromIngest = createRequire(path.join(root, 'apps/ingest/package.json'));
const fromWorker = createRequire(path.join(root, 'apps/worker/package.json'));
const fromCore = createRequire(path.join(root, 'packages/billing-core/package.json'));

export const express = fromIngest('express');
export const Stripe = fromIngest('stripe');
export const bullmq = fromWorker('bullmq');
export const { Redis } = fromWorker('ioredis');
export const pg = fromCore('pg');
/** The Standard Webhooks reference library Tally signs with; the bench's receiver verifies with it. */
export const { Webhook } = fromCore('standardwebhooks');

/**
 * The built migration runner (platform's migrate()) bound to billing-core's migrations folder
 * (the bench runs after `tsc -b`).
 */
export async function loadMigrate() {
  const platformDb = await import(path.join(root, 'packages/platform/dist/db/migrate.js'));
  const core = await import(path.join(root, 'packages/billing-core/dist/db/migrations-dir.js'));
  const migrate = platformDb.migrate ?? platformDb.default.migrate;
  const migrationsDir = core.migrationsDir ?? core.default.migrationsDir;
  return (url) => migrate(url, migrationsDir);
}

/** The worker's built config schema and pool formula (after `tsc -b`). */
export function loadWorkerConfig() {
  return fromWorker(path.join(root, 'apps/worker/dist/config.js'));
}

/** billing-core's built advisory lock registry, for the baselines that take Tally's locks (after `tsc -b`). */
export function loadAdvisoryLocks() {
  return fromCore(path.join(root, 'packages/billing-core/dist/db/advisory-locks.js'));
}
