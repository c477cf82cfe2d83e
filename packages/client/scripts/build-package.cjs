// The published build of @tally/client (`npm pack` runs it as `prepack`; `npm run build` too):
// dist/ afresh, CommonJS in dist/ and ES modules in dist/esm/ (marked "type": "module"), each with
// its declarations, no source maps (the sources are not shipped). The workspace's own `tsc -b`
// keeps building dist/ (CommonJS, with maps) for the repository's tests.
const { execFileSync } = require('node:child_process');
const { rmSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const packageRoot = path.join(__dirname, '..');
const tsc = require.resolve('typescript/bin/tsc', { paths: [packageRoot] });
const build = (tsconfig) =>
  execFileSync(process.execPath, [tsc, '-p', path.join(packageRoot, tsconfig)], { stdio: 'inherit' });

rmSync(path.join(packageRoot, 'dist'), { recursive: true, force: true });
build('tsconfig.cjs.json');
build('tsconfig.esm.json');
writeFileSync(path.join(packageRoot, 'dist/esm/package.json'), `${JSON.stringify({ type: 'module' }, null, 2)}\n`);
