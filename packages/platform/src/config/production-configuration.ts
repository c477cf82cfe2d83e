import type { Logger } from 'pino';
import { z } from 'zod';

/**
 * `NODE_ENV` (ingest, api, worker): `production` turns the local demo off. The root scripts then
 * never read `.env.example` (scripts/bootstrap.mjs), and a process refuses to start with any of
 * the demo's public values or switches (demoConfigurationProblems), so a variable the operator
 * forgot can only leave a provider off (503 not_configured), never open it with a known secret.
 */
export const nodeEnvSetting = z.string().optional();

/**
 * The secrets `.env.example` and docker-compose.yml publish. Matched as substrings, so
 * `Bearer rc_demo_webhook_auth` and `rc_demo_webhook_auth` are both the demo value.
 * `production-configuration.test.ts` keeps this list equal to the secrets of `.env.example`.
 */
export const demoSecretValues = [
  'whsec_demo_tally_local_secret',
  'rc_demo_webhook_auth',
  'app_demo_key',
  'admin_demo_key',
] as const;

/** The variables that hold secrets a demo value could fill. */
const secretListVariables = ['STRIPE_WEBHOOK_SECRETS', 'REVENUECAT_WEBHOOK_AUTH', 'APP_API_KEYS', 'ADMIN_API_KEYS'];

export interface ConfigurationProblem {
  variable: string;
  message: string;
}

/**
 * What a production process must refuse in its parsed configuration: a demo secret in any secret
 * list it reads, purchases credited from the webhook body alone, and sandbox payments. Empty
 * outside production. Names the variable, never the value.
 */
export function demoConfigurationProblems(config: Record<string, unknown>): ConfigurationProblem[] {
  if (config.NODE_ENV !== 'production') return [];
  const problems: ConfigurationProblem[] = [];
  for (const variable of secretListVariables) {
    const values = config[variable];
    if (!Array.isArray(values)) continue;
    if (values.some((value) => demoSecretValues.some((demo) => String(value).includes(demo)))) {
      problems.push({
        variable,
        message: 'holds a public demo value from .env.example; with NODE_ENV=production set a secret of your own',
      });
    }
  }
  if (config.REVENUECAT_VERIFY_PURCHASES === false) {
    problems.push({
      variable: 'REVENUECAT_VERIFY_PURCHASES',
      message:
        'false credits token packs from the webhook body alone (the local demo only); with NODE_ENV=production leave it unset (true)',
    });
  }
  const environments = config.PAYMENT_ENVIRONMENTS;
  if (Array.isArray(environments) && environments.includes('sandbox')) {
    problems.push({
      variable: 'PAYMENT_ENVIRONMENTS',
      message:
        'sandbox payments move money only in the local demo; with NODE_ENV=production leave it unset (production), or run a staging deployment without NODE_ENV=production',
    });
  }
  return problems;
}

/** `superRefine` for an app's environment schema: every demo value or switch is an issue (exit 1). */
export function refuseDemoConfigurationInProduction(config: Record<string, unknown>, ctx: z.RefinementCtx): void {
  for (const problem of demoConfigurationProblems(config)) {
    ctx.addIssue({ code: 'custom', path: [problem.variable], message: problem.message });
  }
}

/** One provider (or external service) a process can run without, and what it does when it is off. */
export interface ProviderSwitch {
  name: string;
  on: boolean;
  /** What happens while it is off, e.g. "answers 503 not_configured (set STRIPE_WEBHOOK_SECRETS)". */
  whenOff: string;
}

/**
 * The start-up line that says which providers are off (product.md: a process "says at start which
 * providers are off"): `providers` lists each as on or off, `off` what each off one does. A warning
 * when any is off, so it stands out in production logs.
 */
export function logProviderStatus(logger: Logger, switches: readonly ProviderSwitch[]): void {
  const providers = Object.fromEntries(switches.map((entry) => [entry.name, entry.on ? 'on' : 'off']));
  const offSwitches = switches.filter((entry) => !entry.on);
  if (offSwitches.length === 0) {
    logger.info({ providers }, 'providers: all configured');
    return;
  }
  const off = Object.fromEntries(offSwitches.map((entry) => [entry.name, entry.whenOff]));
  logger.warn({ providers, off }, `providers off: ${offSwitches.map((entry) => entry.name).join(', ')}`);
}
