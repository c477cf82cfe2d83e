import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildOpenApiDocument } from '../../apps/api/src/openapi/openapi-document';

const client = path.join(__dirname, '../../packages/client');

/**
 * The types of a document by the renderer generate.cjs writes with (packages/client/scripts/api-types.cjs),
 * in a child node: openapi-typescript loads ES modules, which Jest's CommonJS runtime cannot.
 */
function renderApiTypes(document: unknown): string {
  const script = `
    let input = '';
    process.stdin.on('data', (chunk) => { input += chunk; });
    process.stdin.on('end', () => {
      require('./scripts/api-types.cjs').renderApiTypes(JSON.parse(input)).then((source) => process.stdout.write(source));
    });
  `;
  const child = spawnSync(process.execPath, ['-e', script], {
    cwd: client,
    input: JSON.stringify(document),
    encoding: 'utf8',
  });
  if (child.status !== 0) throw new Error(`openapi-typescript failed: ${child.stderr}`);
  return child.stdout;
}

describe("@tally/client's generated types", () => {
  it('are the types of the live document (regenerate: tsc -b, then node packages/client/scripts/generate.cjs)', () => {
    const committed = readFileSync(path.join(client, 'src/api-types.ts'), 'utf8');
    const fresh = renderApiTypes(buildOpenApiDocument());
    expect(fresh.length).toBeGreaterThan(10_000);
    expect(fresh === committed).toBe(true);
  });
});
