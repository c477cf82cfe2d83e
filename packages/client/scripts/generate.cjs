// Writes packages/client/src/api-types.ts from the document the api serves at /openapi.json, built
// from the api's route modules (apps/api/dist: run `tsc -b` first). No server is started.
const { writeFileSync } = require('node:fs');
const path = require('node:path');
const { buildOpenApiDocument } = require('../../../apps/api/dist/openapi/openapi-document.js');
const { renderApiTypes } = require('./api-types.cjs');

renderApiTypes(buildOpenApiDocument()).then((source) => {
  const target = path.join(__dirname, '../src/api-types.ts');
  writeFileSync(target, source);
  process.stdout.write(`wrote ${path.relative(process.cwd(), target)}\n`);
});
