import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const script = path.join(root, 'scripts/mutation-check.mjs');

/** A marker line (built here so that this file's own lines are not markers of the real tree). */
const mark = (name: string, prefix = '//') => `${prefix} guard: ${name}`;

const payment = [
  'export function pay(amount: number, seen: Set<string>, reference: string) {',
  `  ${mark('pay-once')}`,
  '  if (seen.has(reference)) {',
  "    return 'already';",
  '  }',
  `  ${mark('pay-positive')}`,
  '  const checked = amount > 0 && Number.isInteger(amount);',
  "  return checked ? 'paid' : 'refused';",
  '}',
  '',
].join('\n');

interface Mutation {
  guard?: string;
  file?: string;
  del?: true;
  from?: string;
  to?: string;
  name: string;
  tests: string[];
}

const payOnce: Mutation = { guard: 'pay-once', del: true, tests: ['test/pay.test'], name: 'pays twice' };
const payPositive: Mutation = {
  guard: 'pay-positive',
  from: 'amount > 0',
  to: 'true',
  tests: ['test/pay.test'],
  name: 'pays a negative amount',
};

/** Writes a tiny tree ({relative path: content}) with its scripts/mutations.mjs listing `mutations`. */
function tree(files: Record<string, string>, mutations: Mutation[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'mutation-check-'));
  const all = {
    ...files,
    'test/pay.test.ts': "it('pays', () => undefined);\n",
    'scripts/mutations.mjs': `export const mutations = ${JSON.stringify(mutations)};\n`,
  };
  for (const [file, content] of Object.entries(all)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
  return dir;
}

/** The dry run of scripts/mutation-check.mjs (or `--list`) against a tiny tree. */
function dryRun(files: Record<string, string>, mutations: Mutation[], args: string[] = []) {
  const dir = tree(files, mutations);
  try {
    const run = spawnSync(process.execPath, [script, ...args], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, MUTATIONS_ROOT: dir, MUTATIONS_DRY_RUN: '1' },
    });
    return { status: run.status, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What each mutation would write ({ file, mutated }), from the script's own planMutation. */
function mutatedSources(files: Record<string, string>, mutations: Mutation[]) {
  const dir = tree(files, mutations);
  try {
    const program = `
      import { checkMutations } from ${JSON.stringify(script)};
      import { mutations } from ${JSON.stringify(path.join(dir, 'scripts/mutations.mjs'))};
      const { plans, problems } = checkMutations(mutations, ${JSON.stringify(dir)});
      console.log(JSON.stringify({ problems, plans: mutations.map((m) => plans.get(m)) }));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', program], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(run.stderr);
    return JSON.parse(run.stdout) as { problems: string[]; plans: { file: string; mutated: string }[] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the mutation check finds each guard by its marker', () => {
  it('passes when every marker is found once and every mutation applies', () => {
    const run = dryRun({ 'src/pay.ts': payment }, [payOnce, payPositive]);
    expect(run.output).toContain('2 mutations, every marker found once');
    expect(run.status).toBe(0);
  });

  it('fails on a marker that is missing', () => {
    const run = dryRun({ 'src/pay.ts': payment.replace(mark('pay-once'), '// pay once') }, [payOnce, payPositive]);
    expect(run.output).toContain('mutation "pays twice": no marker "guard: pay-once" in the tree');
    expect(run.status).toBe(2);
  });

  it('fails on a marker that is duplicated, in the same file or another', () => {
    const copied = dryRun({ 'src/pay.ts': payment, 'src/copy.ts': payment }, [payOnce, payPositive]);
    expect(copied.output).toMatch(/marker "guard: pay-once" 2 times: src\/(copy|pay)\.ts,src\/(copy|pay)\.ts/);
    expect(copied.status).toBe(2);
    const twice = payment.replace(mark('pay-positive'), mark('pay-once'));
    const inOneFile = dryRun({ 'src/pay.ts': twice }, [payOnce]);
    expect(inOneFile.output).toContain('marker "guard: pay-once" 2 times');
    expect(inOneFile.status).toBe(2);
  });

  it('fails when the marked code no longer holds what the mutation changes, or holds it twice', () => {
    const moved = payment.replace('amount > 0 && ', '').replace('return checked ?', 'return amount > 0 && checked ?');
    const away = dryRun({ 'src/pay.ts': moved }, [payOnce, payPositive]);
    expect(away.output).toContain('"amount > 0" found 0 times in the code marked "guard: pay-positive" in src/pay.ts');
    expect(away.status).toBe(2);
    const twice = dryRun({ 'src/pay.ts': payment.replace('Number.isInteger(amount)', 'amount > 0') }, [payPositive]);
    expect(twice.output).toContain('"amount > 0" found 2 times');
    expect(twice.status).toBe(2);
  });

  it('fails on a marker no mutation names, and on a mutation named by file outside a landed migration', () => {
    const unused = dryRun({ 'src/pay.ts': payment }, [payOnce]);
    expect(unused.output).toContain('marker "guard: pay-positive" in src/pay.ts is named by no mutation');
    expect(unused.status).toBe(2);
    const byText: Mutation = {
      file: 'src/pay.ts',
      from: 'amount > 0',
      to: 'true',
      tests: ['test/pay.test'],
      name: 'by text',
    };
    const copiedText = dryRun({ 'src/pay.ts': payment }, [payOnce, payPositive, byText]);
    expect(copiedText.output).toContain('mutation "by text": names no guard');
    expect(copiedText.status).toBe(2);
  });

  it('fails on a mutation whose tests match no test file (Jest would exit 1 and the mutation look caught)', () => {
    const gone = dryRun({ 'src/pay.ts': payment }, [payOnce, { ...payPositive, tests: ['test/gone.test'] }]);
    expect(gone.output).toContain('mutation "pays a negative amount": its tests test/gone.test match no test file');
    expect(gone.status).toBe(2);
  });

  it('keeps a mutation when its guard moves to another file and is reformatted, marker and all', () => {
    const rewrapped = [
      `${mark('pay-positive')}`,
      'export const valid = (amount: number) =>',
      '  amount >',
      '    0 && Number.isInteger(amount);',
      '',
    ].join('\n');
    const files = { 'src/pay.ts': payment.replace(/ {2}\/\/ guard: pay-positive\n/, ''), 'src/valid.ts': rewrapped };
    const run = dryRun(files, [payOnce, payPositive], ['--list']);
    expect(run.output).toContain('pay-positive: pays a negative amount\n    src/valid.ts -> test/pay.test');
    expect(run.status).toBe(0);
  });

  it('deletes the marked statement or replaces inside it, in code, SQL, YAML and Markdown', () => {
    const files = {
      'src/pay.ts': payment,
      'db/check.sql': `${mark('sql-check', '--')}\nALTER TABLE t\n  ADD CHECK (amount > 0);\nSELECT 1;\n`,
      'ops/alerts.yml': `- alert: A\n  ${mark('alert-a', '#')}\n  expr: |\n    x > 1\n    and y\n  for: 2m\n`,
      'docs/a.md': `Intro.\n\n<!-- guard: doc-table -->\n| a | b |\n| - | c, d |\n\nAfter.\n`,
    };
    const mutations: Mutation[] = [
      payOnce,
      payPositive,
      { guard: 'sql-check', del: true, tests: ['test/pay.test'], name: 'no check' },
      { guard: 'alert-a', from: '1 and', to: '1 or', tests: ['test/pay.test'], name: 'or' },
      { guard: 'doc-table', from: 'c, d', to: 'c', tests: ['test/pay.test'], name: 'doc' },
    ];
    const { problems, plans } = mutatedSources(files, mutations);
    expect(problems).toEqual([]);
    const mutated = plans.map((plan) => plan.mutated);
    expect(mutated[0]).toBe(payment.replace("  if (seen.has(reference)) {\n    return 'already';\n  }\n", ''));
    expect(mutated[1]).toBe(payment.replace('amount > 0 &&', 'true &&'));
    expect(mutated[2]).toBe(`${mark('sql-check', '--')}\nSELECT 1;\n`);
    expect(mutated[3]).toBe(files['ops/alerts.yml'].replace('x > 1\n    and', 'x > 1 or'));
    expect(mutated[4]).toBe(files['docs/a.md'].replace('c, d', 'c'));
  });
});
