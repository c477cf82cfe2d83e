// `npm run test:chaos`: build, then the chaos suite (test/chaos) against Tally's built processes
// and a Postgres and a Redis of its own. CHAOS_PROFILE=short (default, CI) or full; CHAOS_SEED=<n>
// reproduces a run; CHAOS_SCENARIOS=a,b runs only those; CHAOS_VIA_PGBOUNCER=1 runs every process
// through PgBouncer (with a synchronous standby). The full profile, unless CHAOS_VIA_PGBOUNCER is
// set, runs twice: direct, then once more through PgBouncer. CHAOS_RECORD=1 then writes the
// reports into docs/reliability.md ("Latest full run", scripts/chaos-record.mjs). CHAOS_STARVE=<n>
// runs the suite on a starved machine: n busy loops (one process each, at normal priority) for the
// whole run, stopped at its end whatever happened (and each stops by itself once this process is
// gone, or after an hour). Extra arguments go to Jest.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ensureBuilt, ensureInstalled, log, root } from './bootstrap.mjs';
import { recordInto, reportSection, runSection } from './chaos-record.mjs';

ensureInstalled();
log('build (tsc -b)');
ensureBuilt();
const profile = process.env.CHAOS_PROFILE ?? 'short';
const passes =
  process.env.CHAOS_VIA_PGBOUNCER !== undefined
    ? [process.env.CHAOS_VIA_PGBOUNCER]
    : profile === 'full' && !process.env.CHAOS_SCENARIOS
      ? ['0', '1']
      : ['0'];
// Both passes replay the same seed (printed by the first when none is given).
const seed = process.env.CHAOS_SEED ?? String(Math.floor(Math.random() * 2 ** 31));
// Each loop spins and checks every few million iterations that its parent is still this process
// (a killed run leaves none behind) and that its hour is not up.
const busyLoop = `const parent = process.ppid, end = Date.now() + 3600000;
for (;;) { for (let i = 0; i < 5e6; i += 1); if (process.ppid !== parent || Date.now() > end) process.exit(0); }`;
const starve = Number(process.env.CHAOS_STARVE ?? 0);
const loops = Array.from({ length: Number.isInteger(starve) && starve > 0 ? starve : 0 }, () =>
  spawn(process.execPath, ['-e', busyLoop], { stdio: 'ignore' }),
);
const stopLoops = () => {
  for (const loop of loops) if (loop.exitCode === null && loop.signalCode === null) loop.kill('SIGKILL');
};
process.on('exit', stopLoops);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    stopLoops();
    process.exit(1);
  });
}
if (loops.length > 0)
  log(`${loops.length} busy loops started (CHAOS_STARVE): pids ${loops.map((loop) => loop.pid).join(' ')}`);
// The harness plays the outside world (providers, the app, the fake AI service, SMTP), which in
// production runs on other machines: under CHAOS_STARVE it runs at nice -10 and starts every
// process under test at nice 0 again (TALLY_UNDER_TEST_NICE, test/support/under-test-priority.ts),
// so the busy loops starve the machine under test, not the providers. CHAOS_STARVE_HARNESS=1
// starves the harness too (how the first starved runs were made: the simulator's own requests
// then went out late, docs/reliability.md#starvation).
const raiseHarness = loops.length > 0 && process.env.CHAOS_STARVE_HARNESS !== '1';
if (raiseHarness) log('the harness (the providers, the app) at nice -10; the processes under test at nice 0');
let status = 0;
for (const via of passes) {
  log(`chaos suite (profile ${profile}${via === '1' ? ', through PgBouncer' : ''})`);
  const jestArgs = [
    path.join(root, 'node_modules/jest/bin/jest.js'),
    '-c',
    path.join(root, 'jest.chaos.config.js'),
    ...process.argv.slice(2),
  ];
  const jest = spawnSync(
    raiseHarness ? 'nice' : process.execPath,
    raiseHarness ? ['-n', '-10', process.execPath, ...jestArgs] : jestArgs,
    {
      cwd: root,
      stdio: 'inherit',
      env: {
        ...process.env,
        CHAOS_SEED: seed,
        CHAOS_VIA_PGBOUNCER: via,
        ...(raiseHarness ? { TALLY_UNDER_TEST_NICE: '10' } : {}),
      },
    },
  );
  if ((jest.status ?? 1) !== 0) status = jest.status ?? 1;
}
stopLoops();
if (process.env.CHAOS_RECORD === '1') {
  const reports = passes
    .map((via) => path.join(root, 'test-output', `chaos-${seed}${via === '1' ? '-pgbouncer' : ''}.md`))
    .filter((file) => existsSync(file));
  const doc = path.join(root, 'docs/reliability.md');
  writeFileSync(
    doc,
    recordInto(readFileSync(doc, 'utf8'), [
      runSection(reports.map((file) => reportSection(readFileSync(file, 'utf8')))),
    ]),
  );
  log(`${reports.length} report(s) recorded in docs/reliability.md (Latest full run)`);
}
process.exit(status);
