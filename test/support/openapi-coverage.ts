import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describedOperations } from './openapi-answers';

export interface OpenApiCoverage {
  routes: number;
  routesAnswered: number;
  statuses: number;
  statusesAnswered: number;
  /** Described routes (`GET /v1/…`) no suite got an answer from. */
  unanswered: string[];
}

/** What the workers of one Jest run recorded (openapi-answers.ts), against the document. */
export function openApiCoverage(dir: string): OpenApiCoverage {
  const seen = new Set<string>();
  const seenRoutes = new Set<string>();
  if (existsSync(dir)) {
    for (const file of readdirSync(dir)) {
      for (const line of readFileSync(path.join(dir, file), 'utf8').split('\n')) {
        if (!line) continue;
        const { method, template, status } = JSON.parse(line) as { method: string; template: string; status: number };
        seen.add(`${method} ${template} ${status}`);
        seenRoutes.add(`${method} ${template}`);
      }
    }
  }
  const operations = describedOperations();
  const statuses = operations.flatMap((op) =>
    Object.keys(op.responses).map((status) => `${op.method} ${op.template} ${status}`),
  );
  return {
    routes: operations.length,
    routesAnswered: operations.filter((op) => seenRoutes.has(`${op.method} ${op.template}`)).length,
    statuses: statuses.length,
    statusesAnswered: statuses.filter((key) => seen.has(key)).length,
    unanswered: operations.map((op) => `${op.method} ${op.template}`).filter((route) => !seenRoutes.has(route)),
  };
}

/**
 * The end of a Jest run (global-teardown.ts): says how much of the document the e2e answers
 * covered and, when the run is the whole suite (TALLY_OPENAPI_COVERAGE=required, set by
 * scripts/test.mjs), throws for every described route that no suite got an answer from.
 */
export function reportOpenApiCoverage(dir: string, required: boolean): OpenApiCoverage {
  const coverage = openApiCoverage(dir);
  process.stdout.write(
    `\nOpenAPI coverage of the e2e answers: ${coverage.routesAnswered} of ${coverage.routes} routes, ` +
      `${coverage.statusesAnswered} of ${coverage.statuses} described statuses\n`,
  );
  // guard: openapi-coverage-required
  if (required && coverage.unanswered.length > 0) {
    throw new Error(
      `described routes no e2e suite got an answer from (test them through TestStack.apiRequest):\n  ${coverage.unanswered.join('\n  ')}`,
    );
  }
  return coverage;
}
