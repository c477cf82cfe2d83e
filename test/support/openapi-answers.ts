import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../../apps/api/src/openapi/openapi-document';

/**
 * Every api answer the e2e suites receive through TestStack.apiRequest is matched here against
 * the OpenAPI document (`GET /openapi.json`): the route and status must be described, the JSON
 * body must match that status's schema, and the headers must be the described ones (Request-Id
 * always). What was seen is appended to a file of this Jest run (TALLY_OPENAPI_SEEN_DIR, made by
 * test/global-setup.ts), so test/global-teardown.ts can count the routes and statuses covered
 * across every worker and fail on a documented route no suite got an answer from.
 */

type Operation = {
  method: string;
  template: string;
  pattern: RegExp;
  responses: Record<string, { content?: Record<string, { schema?: object }>; headers?: Record<string, object> }>;
};

/** The described surfaces, and the paths under them that are not JSON routes (the console's HTML, the queue dashboard). */
const described = /^\/(v1|admin)\//;
const notDescribed = [/^\/admin\/console(\/|$)/, /^\/admin\/queues(\/|$)/];

let operations: Operation[] | undefined;
const validators = new Map<string, ValidateFunction>();
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

/** The described operations, each with a regular expression for its path template. */
export function describedOperations(): Operation[] {
  if (operations) return operations;
  const document = buildOpenApiDocument();
  operations = Object.entries(document.paths ?? {}).flatMap(([template, item]) =>
    (['get', 'post', 'put'] as const).flatMap((method) => {
      const operation = item[method];
      if (!operation) return [];
      const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
      return [
        { method: method.toUpperCase(), template, pattern, responses: operation.responses as Operation['responses'] },
      ];
    }),
  );
  return operations;
}

/** The described operation of a request, by method and path (a literal segment wins over a parameter). */
export function operationOf(method: string, pathname: string): Operation | undefined {
  const matches = describedOperations().filter((op) => op.method === method && op.pattern.test(pathname));
  // `/admin/events/requeue` is both itself and `/admin/events/{id}`: the fewest parameters wins.
  return matches.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0))[0];
}

function validatorOf(key: string, schema: object): ValidateFunction {
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(key, validate);
  }
  return validate;
}

/** Throws, naming what differs, unless the answer is the one the document describes. */
export function matchAnswer(
  method: string,
  url: string,
  answer: { status: number; headers: Headers; bodyText: string },
): { template: string; status: number } | undefined {
  const pathname = decodeURIComponent(new URL(url, 'http://api').pathname);
  const upper = method.toUpperCase();
  if (upper !== 'GET' && upper !== 'POST' && upper !== 'PUT') return undefined;
  if (!described.test(pathname) || notDescribed.some((pattern) => pattern.test(pathname))) return undefined;
  const operation = operationOf(upper, pathname);
  const where = `${upper} ${pathname} → ${answer.status}`;
  if (!operation) {
    // Refused before any route ran (no key, too many failures) or no such route: the shared answers.
    if ([401, 404, 429].includes(answer.status)) return undefined;
    throw new Error(`${where}: the route is not in the OpenAPI document (describe it next to the route)`);
  }
  const documented = operation.responses[String(answer.status)];
  if (!documented) {
    throw new Error(
      `${where}: status not described for ${operation.template} (described: ${Object.keys(operation.responses).join(', ')})`,
    );
  }
  const schema = documented.content?.['application/json']?.schema;
  if (schema) {
    if (!/^application\/json/.test(answer.headers.get('content-type') ?? '')) {
      throw new Error(`${where}: described as JSON, answered ${answer.headers.get('content-type')}`);
    }
    const validate = validatorOf(`${upper} ${operation.template} ${answer.status}`, schema);
    const body: unknown = JSON.parse(answer.bodyText);
    if (!validate(body)) {
      throw new Error(
        `${where}: the body does not match ${operation.template}'s schema: ${ajv.errorsText(validate.errors)}\n${answer.bodyText.slice(0, 2000)}`,
      );
    }
  }
  for (const name of ['Request-Id', 'Idempotent-Replayed']) {
    if (answer.headers.has(name) && !documented.headers?.[name]) {
      throw new Error(`${where}: answered header ${name}, which is not described`);
    }
  }
  if (!answer.headers.get('Request-Id')) throw new Error(`${where}: no Request-Id header`);
  return { template: operation.template, status: answer.status };
}

/** Where this Jest run's workers write what they saw (global-setup makes the folder). */
export function seenDirectory(): string | undefined {
  return process.env.TALLY_OPENAPI_SEEN_DIR;
}

/** Matches an answer (matchAnswer) and records it for the coverage count; the response is left unread. */
export async function checkApiAnswer(method: string, url: string, response: Response): Promise<void> {
  const bodyText = await response.clone().text();
  const seen = matchAnswer(method, url, { status: response.status, headers: response.headers, bodyText });
  const dir = seenDirectory();
  if (seen && dir) {
    mkdirSync(dir, { recursive: true });
    appendFileSync(
      path.join(dir, `${process.pid}.jsonl`),
      `${JSON.stringify({ method: method.toUpperCase(), ...seen })}\n`,
    );
  }
}
