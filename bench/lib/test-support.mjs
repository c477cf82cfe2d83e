// The test fixtures the bench shares with the tests, one definition: a module of test/support whose
// only imports are node's own or type-only (apple-signing.ts, apple-payloads.ts) is transpiled by the
// workspace's TypeScript (types stripped, nothing checked) and imported as it is, so the bench makes
// and signs what the tests make and sign.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { root } from './workspace.mjs';

let typescript;

/** `name`: a file of test/support, e.g. 'apple-signing.ts'. */
export async function importTestSupport(name) {
  typescript ??= createRequire(path.join(root, 'package.json'))('typescript');
  const file = path.join(root, 'test/support', name);
  const { outputText } = typescript.transpileModule(readFileSync(file, 'utf8'), {
    fileName: file,
    compilerOptions: { module: typescript.ModuleKind.ES2022, target: typescript.ScriptTarget.ES2022 },
  });
  const relative = /\bfrom\s+['"]\.{1,2}\//.exec(outputText);
  if (relative) throw new Error(`test/support/${name} imports another module (${relative[0]}…): not loadable alone`);
  return import(`data:text/javascript;base64,${Buffer.from(outputText).toString('base64')}`);
}
