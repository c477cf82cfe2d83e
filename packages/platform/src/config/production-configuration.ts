import type { Logger } from 'pino';
import { z } from 'zod';
import { appleConfigurationProblems } from './apple-settings';

/**
 * `NODE_ENV` (ingest, api, worker): `production` turns the local demo off. The root scripts then
 * never read `.env.example` (scripts/bootstrap.mjs), and a process refuses to start with any of
 * the demo's public values or switches (demoConfigurationProblems), so a variable the operator
 * forgot can only leave a provider off (503 not_configured), never open it with a known secret.
 */
export const nodeEnvSetting = z.string().optional();

/**
 * The public values `.env.example` and docker-compose.yml ship (the local demo's secrets and keys).
 * Matched as substrings, so `Bearer rc_demo_webhook_auth` and `rc_demo_webhook_auth` are both
 * the demo value. `production-configuration.test.ts` reads those files and fails when one of their
 * secrets is missing here.
 */
export const demoSecretValues = [
  'whsec_demo_tally_local_secret',
  'rc_demo_webhook_auth',
  'app_demo_key',
  'admin_demo_key',
  'sk_test_demo',
  // docker-compose.yml's database credentials, inside DATABASE_URL and DATABASE_MIGRATION_URL.
  '//tally:tally@',
] as const;

/**
 * What a template's placeholder holds (infra/k8s/secret.template.yaml: `whsec_REPLACE_ME`,
 * `postgres://tally:REPLACE_ME@…`), matched as a substring in any case.
 */
export const placeholderMarker = 'REPLACE_ME';

/**
 * The one definition of a value production refuses: it contains a demo secret or a template's
 * placeholder. `production-configuration.test.ts` reads every file that ships such values
 * (`.env.example`, docker-compose.yml, infra/) and checks that each one is refused.
 */
export function demoOrPlaceholderOf(value: string): 'demo' | 'placeholder' | null {
  // guard: production-placeholder
  if (value.toUpperCase().includes(placeholderMarker)) return 'placeholder';
  if (demoSecretValues.some((demo) => value.includes(demo))) return 'demo';
  return null;
}

export interface ConfigurationProblem {
  variable: string;
  message: string;
}

/** A variable's values as text: a string, a list of strings (secret rotation), a URL. */
function textsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value instanceof URL) return [value.href];
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return [];
}

/**
 * What a production process must refuse in its parsed configuration: a demo secret or a
 * template's placeholder in any variable it reads, purchases credited from the webhook body
 * alone, and sandbox payments. Empty outside production. Names the variable, never the value.
 */
export function demoConfigurationProblems(config: Record<string, unknown>): ConfigurationProblem[] {
  if (config.NODE_ENV !== 'production') return [];
  const problems: ConfigurationProblem[] = [];
  for (const [variable, value] of Object.entries(config)) {
    const kinds = new Set(textsOf(value).map(demoOrPlaceholderOf));
    if (kinds.has('placeholder')) {
      problems.push({
        variable,
        message: `holds a template placeholder (${placeholderMarker}); with NODE_ENV=production set the real value`,
      });
    } else if (kinds.has('demo')) {
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
  problems.push(...appleConfigurationProblems(config));
  return problems;
}

/** `superRefine` for an app's environment schema: every demo value or switch is an issue (exit 1). */
export function refuseDemoConfigurationInProduction(config: Record<string, unknown>, ctx: z.RefinementCtx): void {
  // guard: production-demo-config
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
