// Dockerfile lint. hadolint is neither in Debian bookworm nor on npm (the npm `hadolint` package
// only wraps a binary it does not ship), so this combines:
//  - dockerfile-utils' validate(): the checker behind VS Code's Docker extension (instruction
//    syntax, flags, duplicate or invalid stage names, ports, deprecated instructions);
//  - a few hadolint-style rules written here (each names the hadolint rule it mirrors, or
//    explains itself), plus the rules of this repository's image.
import { validate } from 'dockerfile-utils';

export type Instruction = { keyword: string; args: string; line: number };

/** Instructions with continuation lines joined; comments and parser directives dropped. */
export function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending: Instruction | undefined;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!pending && (line === '' || line.startsWith('#'))) return;
    if (pending && line.startsWith('#')) return;
    const continued = line.endsWith('\\');
    const body = continued ? line.slice(0, -1) : line;
    if (pending) pending.args = `${pending.args} ${body}`.trim();
    else {
      const [keyword = '', ...rest] = body.split(/\s+/);
      pending = { keyword: keyword.toUpperCase(), args: rest.join(' '), line: i + 1 };
    }
    if (!continued) {
      instructions.push(pending);
      pending = undefined;
    }
  });
  if (pending) instructions.push(pending);
  return instructions;
}

export type Expectations = {
  /** The Node.js major line the runtime image must use. */
  nodeMajor: number;
  /** The pnpm version the install must pin (root package.json `packageManager`). */
  pnpmVersion: string;
  /** Workspace package directories whose package.json must be copied before the install. */
  workspacePackages: string[];
};

/** Every problem found; empty when the Dockerfile passes. */
export function dockerfileProblems(text: string, expect: Expectations): string[] {
  const problems = validate(text).map((d) => `line ${d.range.start.line + 1}: ${d.message} (dockerfile-utils)`);
  const instructions = parseDockerfile(text);
  const args = new Map<string, string>();
  for (const i of instructions.filter((i) => i.keyword === 'ARG')) {
    const [name, value] = i.args.split('=', 2);
    if (name && value !== undefined && !args.has(name)) args.set(name, value.replace(/^"|"$/g, ''));
  }
  const expand = (s: string) => s.replace(/\$\{?(\w+)\}?/g, (m, name: string) => args.get(name) ?? m);

  const froms = instructions.filter((i) => i.keyword === 'FROM');
  const stages = froms.map((f) => {
    const [image = '', as, name] = f.args.replace(/--platform=\S+\s+/, '').split(/\s+/);
    return { line: f.line, image: expand(image), name: as?.toUpperCase() === 'AS' ? name : undefined };
  });
  const stageNames = new Set(stages.map((s) => s.name));
  for (const s of stages) {
    if (stageNames.has(s.image)) continue;
    const tag = s.image.includes('@') ? 'digest' : s.image.split('/').pop()?.split(':')[1];
    if (!tag) problems.push(`line ${s.line}: FROM ${s.image} has no tag (hadolint DL3006)`);
    else if (tag === 'latest') problems.push(`line ${s.line}: FROM ${s.image} uses latest (hadolint DL3007)`);
  }
  if (stages.length < 2) problems.push('not a multi-stage build: build tools would ship in the image');
  const runtime = stages.at(-1);
  if (runtime && !new RegExp(`^node:${expect.nodeMajor}([.-]|$)`).test(runtime.image))
    problems.push(
      `line ${runtime.line}: the runtime image is ${runtime.image}, not Node ${expect.nodeMajor} (node:${expect.nodeMajor}-…)`,
    );

  const lastStart = froms.at(-1)?.line ?? 0;
  const finalStage = instructions.filter((i) => i.line >= lastStart);
  const users = finalStage.filter((i) => i.keyword === 'USER');
  const user = users.at(-1)?.args.split(':')[0];
  if (!user || user === 'root' || user === '0')
    problems.push('the runtime stage runs as root: end it with USER <non-root> (hadolint DL3002)');

  for (const i of instructions) {
    if (i.keyword === 'ADD' && !/^(--\S+\s+)*https?:/.test(i.args))
      problems.push(`line ${i.line}: ADD for local files; use COPY (hadolint DL3020)`);
    if ((i.keyword === 'CMD' || i.keyword === 'ENTRYPOINT') && !i.args.startsWith('['))
      problems.push(
        `line ${i.line}: ${i.keyword} in shell form; use the JSON form so signals reach node (hadolint DL3025)`,
      );
    if (i.keyword === 'RUN') {
      for (const m of i.args.matchAll(/npm (?:install|i) (?:--global|-g)\b[^&;|]*/g)) {
        const packages = m[0]
          .split(/\s+/)
          .slice(2)
          .filter((w) => w !== '' && !w.startsWith('-'));
        for (const p of packages)
          if (!/@[^@/]+$/.test(p.replace(/^"|"$/g, '')))
            problems.push(`line ${i.line}: npm install -g ${p} without a version (hadolint DL3016)`);
        const pnpm = packages.map((p) => expand(p.replace(/^"|"$/g, ''))).find((p) => p.startsWith('pnpm@'));
        if (pnpm && pnpm !== `pnpm@${expect.pnpmVersion}`)
          problems.push(`line ${i.line}: installs ${pnpm}, but packageManager pins pnpm@${expect.pnpmVersion}`);
      }
      if (/\bapt-get install\b/.test(i.args) && !/--no-install-recommends/.test(i.args))
        problems.push(`line ${i.line}: apt-get install without --no-install-recommends (hadolint DL3015)`);
    }
  }
  if (!instructions.some((i) => i.keyword === 'RUN' && /pnpm@/.test(i.args)))
    problems.push(`pnpm is not installed at the pinned version (pnpm@${expect.pnpmVersion})`);

  const firstInstall = instructions.find((i) => i.keyword === 'RUN' && /pnpm install/.test(i.args))?.line ?? 0;
  const copiedEarly = instructions
    .filter((i) => i.keyword === 'COPY' && i.line < firstInstall)
    .map((i) => i.args.split(/\s+/)[0]);
  for (const dir of expect.workspacePackages)
    if (!copiedEarly.includes(`${dir}/package.json`))
      problems.push(
        `${dir}/package.json is not copied before the first pnpm install: its dependencies would be missing`,
      );
  return problems;
}
