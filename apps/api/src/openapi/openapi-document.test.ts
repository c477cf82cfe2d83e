import { spawnSync } from 'node:child_process';
import { appWebhookMessageTypes } from '@tally/billing-core';
import { apiRoutes } from '../routes/api-routes';
import { buildOpenApiDocument } from './openapi-document';

/**
 * Validates a document with @seriousme/openapi-schema-validator (the OpenAPI Initiative's JSON
 * schemas) in a child node: the validator is an ES module only, which Jest's CommonJS runtime cannot load.
 */
function validateOpenApi(document: unknown): { valid: boolean; version: string; errors?: unknown } {
  const script = `
    import { Validator } from '@seriousme/openapi-schema-validator';
    let input = '';
    for await (const chunk of process.stdin) input += chunk;
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(input));
    process.stdout.write(JSON.stringify({ ...result, version: validator.version }));
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: __dirname,
    input: JSON.stringify(document),
    encoding: 'utf8',
  });
  if (child.status !== 0) throw new Error(`the validator failed: ${child.stderr}`);
  return JSON.parse(child.stdout);
}

describe('the OpenAPI document (GET /openapi.json)', () => {
  const document = buildOpenApiDocument();

  it('is a valid OpenAPI 3.1 document by the standard validator', () => {
    const result = validateOpenApi(document);
    expect(result.errors).toBeUndefined();
    expect(result).toEqual({ valid: true, version: '3.1' });
  });

  it('(the validator refuses a 3.1 document whose answer lacks its description)', () => {
    const broken = structuredClone(document) as { paths: Record<string, { get?: { responses: object } }> };
    const wallet = broken.paths['/v1/users/{userId}/wallet']?.get;
    if (!wallet) throw new Error('no wallet route');
    wallet.responses = { 200: { content: {} } };
    expect(validateOpenApi(broken).valid).toBe(false);
  });

  it('describes only /v1 and /admin routes, each behind its bearer scheme, every answer with Request-Id', () => {
    const operations = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
      (['get', 'post', 'put', 'delete'] as const).flatMap((method) =>
        item[method] ? [{ path, operation: item[method] }] : [],
      ),
    );
    expect(operations.length).toBeGreaterThanOrEqual(24);
    for (const { path, operation } of operations) {
      expect(path).toMatch(/^\/(v1|admin)\//);
      expect(operation.security).toEqual([{ [path.startsWith('/v1/') ? 'appKey' : 'adminKey']: [] }]);
      for (const [status, answer] of Object.entries(operation.responses ?? {})) {
        expect([status, answer && 'headers' in answer && answer.headers?.['Request-Id']]).toEqual([
          status,
          expect.objectContaining({ required: true }),
        ]);
      }
      expect(Object.keys(operation.responses ?? {})).toEqual(expect.arrayContaining(['401', '503']));
    }
    expect(document.components?.securitySchemes).toEqual({
      appKey: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      adminKey: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
  });

  it('describes Idempotency-Key on every /v1 POST and every outbound message type under webhooks', () => {
    for (const [path, item] of Object.entries(document.paths ?? {})) {
      if (!path.startsWith('/v1/') || !item.post) continue;
      expect([path, item.post.parameters]).toEqual([
        path,
        expect.arrayContaining([expect.objectContaining({ in: 'header', name: 'Idempotency-Key' })]),
      ]);
    }
    expect(Object.keys(document.webhooks ?? {}).sort()).toEqual([...appWebhookMessageTypes].sort());
  });

  it('describes each route of the list the api mounts, and no other', () => {
    const described = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
      (['get', 'post', 'put', 'patch', 'delete'] as const).flatMap((method) =>
        item[method] ? [`${method} ${path}`] : [],
      ),
    );
    expect(described.sort()).toEqual(apiRoutes.map((route) => `${route.method} ${route.path}`).sort());
  });
});
