// Validates a Compose file against the current Compose Specification: the JSON schema that the npm
// package `dclint` ships (schemas/compose.schema.json, a copy of compose-spec's
// schema/compose-spec.json with top-level `name`, `include`, `models`, service `provider`), run
// with ajv. The schema types durations as plain strings, so the duration syntax that Compose's
// loader (compose-go) parses afterwards is checked here as well.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { parseDocument } from 'yaml';

const schemaPath = path.join(path.dirname(require.resolve('dclint/package.json')), 'schemas/compose.schema.json');

/** The schema file as shipped; `$schema` names draft-07 by an https URL that ajv does not alias. */
export function loadComposeSchema(): Record<string, unknown> {
  const { $schema: _metaSchema, ...schema } = JSON.parse(readFileSync(schemaPath, 'utf8')) as Record<string, unknown>;
  return schema;
}

const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });
addFormats(ajv);
const validateSchema = ajv.compile(loadComposeSchema());

/** Go's time.ParseDuration syntax, which compose-go uses for every duration field. */
const goDuration = /^[-+]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))*$|^0$/;
const healthcheckDurations = ['interval', 'timeout', 'start_period', 'start_interval'];

function durationProblems(service: string, value: Record<string, unknown>): string[] {
  const found: Array<[string, unknown]> = [];
  const healthcheck = value.healthcheck as Record<string, unknown> | undefined;
  for (const key of healthcheckDurations) found.push([`healthcheck.${key}`, healthcheck?.[key]]);
  found.push(['stop_grace_period', value.stop_grace_period]);
  const deploy = value.deploy as Record<string, Record<string, unknown> | undefined> | undefined;
  for (const section of ['restart_policy', 'update_config', 'rollback_config'])
    for (const key of ['delay', 'window', 'monitor'])
      found.push([`deploy.${section}.${key}`, deploy?.[section]?.[key]]);
  return found
    .filter(([, v]) => v !== undefined && !(typeof v === 'string' && goDuration.test(v)))
    .map(([key, v]) => `/services/${service}/${key}: ${JSON.stringify(v)} is not a duration such as 10s or 1m30s`);
}

function describe(error: ErrorObject): string {
  const extra = error.params && 'additionalProperty' in error.params ? ` (${error.params.additionalProperty})` : '';
  return `${error.instancePath || '/'}: ${error.message}${extra}`;
}

/** Problems in a Compose file's text (YAML errors, schema errors, bad durations); empty when valid. */
export function composeProblems(text: string): string[] {
  // Compose files use YAML 1.1 merge keys (`<<: *anchor`).
  const document = parseDocument(text, { merge: true });
  if (document.errors.length > 0) return document.errors.map((e) => `YAML: ${e.message}`);
  const content = document.toJS() as unknown;
  const problems: string[] = [];
  if (!validateSchema(content)) problems.push(...(validateSchema.errors ?? []).map(describe));
  const services = (content as { services?: Record<string, unknown> } | null)?.services;
  if (services && typeof services === 'object')
    for (const [name, value] of Object.entries(services))
      if (value && typeof value === 'object')
        problems.push(...durationProblems(name, value as Record<string, unknown>));
  return problems;
}
