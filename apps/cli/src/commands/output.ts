/** Prints a value as pretty JSON on stdout (dates as ISO strings). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * A failure a script can read: the message on stderr, and with --json also `{ error: { code,
 * message } }` on stdout, so stdout always parses. Sets exit code 1.
 */
export function fail(options: { json?: boolean | undefined }, code: string, message: string): void {
  process.stderr.write(`${message}\n`);
  if (options.json) printJson({ error: { code, message } });
  process.exitCode = 1;
}
