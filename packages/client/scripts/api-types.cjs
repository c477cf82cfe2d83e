// @tally/client's types from the OpenAPI document (openapi-typescript): the one renderer that
// `generate.cjs` writes src/api-types.ts with and that the drift test (client-types.test.ts) compares it to.
const { default: openapiTS, astToString } = require('openapi-typescript');

const banner =
  "// Generated from the api's OpenAPI document by packages/client/scripts/generate.cjs (openapi-typescript).\n" +
  '// Do not edit: `node packages/client/scripts/generate.cjs` after `tsc -b`; npm test fails on drift.\n';

/** The TypeScript of `paths` and `webhooks` for a document (an object, not a URL: nothing is fetched). */
async function renderApiTypes(document) {
  const ast = await openapiTS(structuredClone(document), { alphabetize: false });
  return banner + astToString(ast);
}

module.exports = { renderApiTypes };
