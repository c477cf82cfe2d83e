import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { dockerfileProblems, type Expectations } from './dockerfile-lint';

const root = path.resolve(__dirname, '../..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { packageManager: string };
const workspaceDirs = ['apps', 'packages']
  .flatMap((dir) => readdirSync(path.join(root, dir)).map((name) => `${dir}/${name}`))
  .concat('test')
  .filter((dir) => readdirSync(path.join(root, dir)).includes('package.json'));
const expectations: Expectations = {
  nodeMajor: 24,
  pnpmVersion: pkg.packageManager.split('@')[1] ?? '',
  workspacePackages: workspaceDirs,
};

const good = `# syntax=docker/dockerfile:1
ARG NODE_IMAGE=node:24-bookworm-slim
FROM \${NODE_IMAGE} AS build
RUN npm install --global "pnpm@${expectations.pnpmVersion}"
${workspaceDirs.map((d) => `COPY ${d}/package.json ${d}/`).join('\n')}
RUN pnpm install --frozen-lockfile
FROM \${NODE_IMAGE} AS runtime
COPY --from=build /app /app
USER node
CMD ["node", "apps/api/dist/main.js"]
`;

describe('the Dockerfile lint', () => {
  it('accepts a Dockerfile that follows the rules', () => {
    expect(dockerfileProblems(good, expectations)).toEqual([]);
  });

  it.each([
    ['a syntax error', good.replace('USER node', 'USER'), 'Instruction has no arguments'],
    ['an unknown flag', good.replace('COPY --from=build', 'COPY --frm=build'), 'Unknown flag: frm'],
    ['the latest tag', good.replace('node:24-bookworm-slim', 'node:latest'), 'DL3007'],
    ['another Node line', good.replace('node:24-bookworm-slim', 'node:20-bookworm-slim'), 'not Node 24'],
    ['a root runtime', good.replace('USER node\n', ''), 'DL3002'],
    [
      'a single stage',
      good.replace(/FROM \$\{NODE_IMAGE\} AS runtime\nCOPY --from=build \/app \/app\n/, ''),
      'multi-stage',
    ],
    ['an unpinned pnpm', good.replace(`"pnpm@${expectations.pnpmVersion}"`, 'pnpm'), 'DL3016'],
    ['another pnpm version', good.replace(`"pnpm@${expectations.pnpmVersion}"`, '"pnpm@9.0.0"'), 'packageManager pins'],
    [
      'a shell-form CMD',
      good.replace('CMD ["node", "apps/api/dist/main.js"]', 'CMD node apps/api/dist/main.js'),
      'DL3025',
    ],
    [
      'a missing workspace manifest',
      good.replace('COPY apps/api/package.json apps/api/\n', ''),
      'apps/api/package.json is not copied',
    ],
  ])('rejects %s', (_what, text, expected) => {
    expect(dockerfileProblems(text, expectations).join('\n')).toContain(expected);
  });
});

describe('infra/Dockerfile', () => {
  it('passes the lint: Node 24, multi-stage, non-root, pnpm at the pinned version', () => {
    expect(dockerfileProblems(readFileSync(path.join(root, 'infra/Dockerfile'), 'utf8'), expectations)).toEqual([]);
  });
});
