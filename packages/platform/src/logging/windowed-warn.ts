import type { Logger } from './create-logger';

/**
 * A warning that may fire thousands of times a second (a storm of timeouts, an overloaded
 * service) logged at most once per `windowMs`: the first occurrence at once, then one line at the
 * window's end with how many of each kind happened in it. Returns the function to call per
 * occurrence. The timer is unref'ed: it never keeps a process alive.
 */
export function createWindowedWarn(
  logger: Logger,
  message: string,
  options: { windowMs?: number; fields?: Record<string, unknown> } = {},
): (kind: string) => void {
  const windowMs = options.windowMs ?? 10_000;
  let counts: Record<string, number> = {};
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    if (Object.keys(counts).length === 0) return;
    logger.warn({ ...options.fields, counts, windowMs }, message);
    counts = {};
  };
  return (kind) => {
    counts[kind] = (counts[kind] ?? 0) + 1;
    if (timer) return;
    flush();
    timer = setTimeout(flush, windowMs);
    timer.unref();
  };
}
