import { existsSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

/** Thrown when the environment is invalid; main() prints it and exits 1. */
export class ConfigError extends Error {
  readonly code = 'invalid_configuration';
}

/**
 * Loads `.env` from the working directory into process.env when the file exists. Variables
 * already set win, as with every dotenv loader.
 */
export function loadDotEnv(cwd = process.cwd()): void {
  const file = path.join(cwd, '.env');
  if (existsSync(file)) process.loadEnvFile(file);
}

/** Parses an environment with a zod schema, collecting every problem into one readable error. */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.output<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => `  - ${issue.path.join('.') || '(environment)'}: ${issue.message}`);
  throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
}

/** A comma-separated list; blanks are dropped. Secrets that rotate are lists. */
export const csvList = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  );

export const nonEmptyCsvList = (what: string) =>
  csvList.refine((list) => list.length > 0, { message: `at least one ${what} is required (comma-separated)` });

const postgresUrl = z
  .string({ message: 'is required, e.g. postgres://postgres@127.0.0.1:5432/tally' })
  .refine((value) => /^postgres(ql)?:\/\//.test(value), { message: 'must be a postgres:// URL' });

const redisUrl = z
  .string()
  .default('redis://127.0.0.1:6379')
  .refine((value) => /^rediss?:\/\//.test(value), { message: 'must be a redis:// or rediss:// URL' });

export const port = (fallback: number) => z.coerce.number().int().min(0).max(65_535).default(fallback);

/** The interface a service listens on when nothing says otherwise: this machine only. */
export const loopbackHost = '127.0.0.1';

const hostName = z
  .string()
  .trim()
  .min(1)
  .refine((value) => !/\s/.test(value), { message: 'must be an address or host name such as 127.0.0.1 or 0.0.0.0' });

/**
 * `HOST`: the interface ingest, the api and the worker's metrics port listen on. The loopback
 * address by default, so a demo started with public keys is not reachable from the network;
 * containers and pods set `0.0.0.0` (docker-compose.yml, infra/k8s) to be reached on theirs.
 */
export const hostSetting = hostName.default(loopbackHost);

/** `INGEST_HOST`, `API_HOST`, `WORKER_METRICS_HOST`: one service's interface; unset, `HOST`'s. */
export const serviceHostSetting = hostName.optional();

export const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** A `true`/`false` switch (exactly those words, so a typo fails the start instead of flipping it). */
export const booleanFlag = (fallback: boolean) =>
  z
    .enum(['true', 'false'], { message: 'must be true or false' })
    .default(fallback ? 'true' : 'false')
    .transform((value) => value === 'true');
/** A positive whole number that may be left unset (then undefined: the feature is off). */
export const optionalPositiveInt = z.coerce.number().int().positive().optional();

/**
 * `WALLET_LOW_BALANCE_THRESHOLD` (api and worker: both post ledger entries): a debit that takes a
 * balance from at least this to below it sends `wallet.balance_low`; unset, none is sent.
 */
export const walletLowBalanceThresholdSetting = optionalPositiveInt;

/**
 * `DEBT_POLICY` (api and worker: both post paid credits; docs/debt.md): `settle` (default) has the
 * next paid credit settle the wallet's debt first; `forgive` records debt and never settles it.
 */
export const debtPolicySetting = z
  .enum(['settle', 'forgive'], { message: 'must be settle or forgive' })
  .default('settle');

/**
 * `APP_WEBHOOK_URL` (worker: where messages are delivered; api and worker: whether the messages a
 * process writes are handed to the app-webhooks queue right after their commit). Unset: messages
 * are written, not delivered.
 */
export const appWebhookUrlSetting = z
  .url({ message: 'must be a URL such as https://app.example.com/webhooks/tally' })
  .optional();

/**
 * `SPEND_LIMIT_DAILY`, `SPEND_LIMIT_MONTHLY` (api, CLI): the tokens a user without a limit of their
 * own may spend per UTC day or calendar month, a whole number of zero or more; unset or empty, no
 * limit (an empty value is not read as 0, which would refuse every spend).
 */
const wholeTokens = { message: 'must be a whole number of tokens, 0 or more (unset: no limit)' };
export const spendLimitSetting = z.preprocess(
  (value) => (typeof value === 'string' && value.trim() === '' ? undefined : value),
  z.coerce
    .number(wholeTokens)
    .int(wholeTokens)
    .min(0, wholeTokens)
    .max(Number.MAX_SAFE_INTEGER, wholeTokens)
    .optional(),
);

/** Settings every process shares. */
export const baseEnvSchema = z.object({
  DATABASE_URL: postgresUrl,
  /**
   * Named prepared statements for the statements a process repeats (createDb, db/create-db.ts).
   * Set false behind a pooler that cannot route them (PgBouncer before 1.21 in transaction mode).
   */
  DATABASE_PREPARED_STATEMENTS: booleanFlag(true),
  REDIS_URL: redisUrl,
  /**
   * A statement not answered by then fails and its connection is destroyed (a silent network
   * path: billing-core's createDb, `queryTimeoutMs`); 0 = never.
   */
  DATABASE_QUERY_TIMEOUT_MS: z.coerce.number().int().min(0).default(30_000),
  /** A producer's Redis command (an enqueue) not answered by then fails; the relay enqueues later. */
  REDIS_COMMAND_TIMEOUT_MS: positiveInt(2_000),
  QUEUE_PREFIX: z
    .string()
    .default('tally')
    .refine((value) => value.length > 0 && !/\s/.test(value), { message: 'must be a non-empty word' }),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  CATALOG_PATH: z.string().optional(),
  SHUTDOWN_TIMEOUT_MS: positiveInt(25_000),
  /** Slow clients: see startHttpServer. The headers timeout must not exceed the request timeout. */
  HTTP_HEADERS_TIMEOUT_MS: positiveInt(10_000),
  HTTP_REQUEST_TIMEOUT_MS: positiveInt(30_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: positiveInt(5_000),
});

/**
 * `PAYMENT_ENVIRONMENTS`: which payment environments may move money or plans; `byDefault` when
 * unset. Events from the others are stored and ignored with that reason. The apps pass both lists
 * from billing-core (`paymentEnvironments`, `defaultPaymentEnvironments`): this package names none.
 */
export function paymentEnvironmentsSetting<const Environment extends string>(
  environments: readonly [Environment, ...Environment[]],
  byDefault: readonly [Environment, ...Environment[]],
) {
  // guard: payment-environments-default
  return csvList
    .transform((list) => (list.length === 0 ? [...byDefault] : list))
    .pipe(z.array(z.enum(environments, { message: `each value is ${environments.join(' or ')}` })));
}
