/**
 * `CHAOS_STARVE` runs the chaos harness, which plays the outside world (the providers, the app,
 * the fake AI service and SMTP), at a raised priority (`nice -n -10`, scripts/chaos.mjs) and
 * sets `TALLY_UNDER_TEST_NICE=10`: every process under test (Tally's, Postgres, Redis, PgBouncer)
 * is started through `nice -n 10`, back to the normal priority the busy loops run at. So the
 * starvation falls on the machine under test, not on the providers, which in production run
 * elsewhere (docs/reliability.md#starvation). `nice` execs the command: the pid and signals stay
 * the process's. Without the variable, the command line is unchanged.
 */
export function atNormalPriority(command: string, args: string[]): [string, string[]] {
  const nice = process.env.TALLY_UNDER_TEST_NICE;
  return nice ? ['nice', ['-n', nice, command, ...args]] : [command, args];
}
