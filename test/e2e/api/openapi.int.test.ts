import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildOpenApiDocument } from '../../../apps/api/src/openapi/openapi-document';
import { matchAnswer } from '../../support/openapi-answers';
import { openApiCoverage, reportOpenApiCoverage } from '../../support/openapi-coverage';
import { readJson } from '../../support/stack';
import { suiteStack } from '../../support/suite';

describe('GET /openapi.json, and every e2e answer matched against it', () => {
  const stack = suiteStack();

  it('serves the document without a key, with a Request-Id', async () => {
    const response = await fetch(`http://127.0.0.1:${stack.api.port}/openapi.json`);
    expect([response.status, response.headers.get('content-type')]).toEqual([
      200,
      expect.stringMatching(/^application\/json/),
    ]);
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    expect(await readJson(response)).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
  });

  it('the matcher refuses an answer that drifted from its description: a field, a status, a route, a header', async () => {
    const response = await stack.apiRequest('/v1/users/openapi-drift/wallet');
    const bodyText = await response.text();
    const answer = { status: 200, headers: response.headers, bodyText };
    expect(matchAnswer('GET', '/v1/users/openapi-drift/wallet', answer)).toEqual({
      template: '/v1/users/{userId}/wallet',
      status: 200,
    });
    const extraField = JSON.stringify({ ...JSON.parse(bodyText), currency: 'EUR' });
    expect(() => matchAnswer('GET', '/v1/users/u/wallet', { ...answer, bodyText: extraField })).toThrow(
      /does not match \/v1\/users\/\{userId\}\/wallet's schema/,
    );
    const wrongType = JSON.stringify({ ...JSON.parse(bodyText), balance: '0' });
    expect(() => matchAnswer('GET', '/v1/users/u/wallet', { ...answer, bodyText: wrongType })).toThrow(/schema/);
    expect(() => matchAnswer('GET', '/v1/users/u/wallet', { ...answer, status: 418 })).toThrow(/status not described/);
    expect(() => matchAnswer('GET', '/v1/users/u/wallet/coins', answer)).toThrow(/not in the OpenAPI document/);
    const replayed = new Headers(response.headers);
    replayed.set('Idempotent-Replayed', 'true');
    expect(() => matchAnswer('GET', '/v1/users/u/wallet', { ...answer, headers: replayed })).toThrow(
      /Idempotent-Replayed, which is not described/,
    );
    const noRequestId = new Headers(response.headers);
    noRequestId.delete('Request-Id');
    expect(() => matchAnswer('GET', '/v1/users/u/wallet', { ...answer, headers: noRequestId })).toThrow(/Request-Id/);
  });

  it('the coverage count fails a whole run on a described route no suite got an answer from', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tally-openapi-coverage-test-'));
    try {
      appendFileSync(
        path.join(dir, '1.jsonl'),
        `${JSON.stringify({ method: 'GET', template: '/v1/users/{userId}/wallet', status: 200 })}\n`,
      );
      const coverage = openApiCoverage(dir);
      expect(coverage).toMatchObject({ routesAnswered: 1, statusesAnswered: 1 });
      expect(coverage.unanswered).toContain('GET /v1/users/{userId}/ledger');
      expect(coverage.unanswered).not.toContain('GET /v1/users/{userId}/wallet');
      expect(() => reportOpenApiCoverage(dir, true)).toThrow(/GET \/v1\/users\/\{userId\}\/ledger/);
      expect(() => reportOpenApiCoverage(dir, false)).not.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
