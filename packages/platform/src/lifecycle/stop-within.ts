import type { Logger } from 'pino';
import { withTimeout } from './with-timeout';

/** One step of a process's shutdown, and what abandoning it leaves (said in the warning). */
export interface StopStep {
  name: string;
  stop: () => Promise<void>;
  /** What is left behind when the budget runs out while this step waits. */
  abandons: string;
}

/**
 * Runs the steps of a shutdown in order, each given what is left of `budgetMs`. A step still
 * waiting when the budget is spent (a silent network path: a statement, a connect or a Redis
 * command nobody answers) is abandoned with a warning that names it, and the steps after it run
 * anyway (with nothing left, each only if it finishes at once), so the process exits within its
 * budget instead of at its hard deadline. A step that fails is logged and the others still run;
 * the first failure is thrown at the end. Returns the names of the steps abandoned.
 */
export async function stopWithin(budgetMs: number, steps: StopStep[], logger: Logger): Promise<string[]> {
  const deadline = Date.now() + budgetMs;
  const abandoned: string[] = [];
  let failure: unknown;
  for (const step of steps) {
    const leftMs = Math.max(0, deadline - Date.now());
    const stopped = step.stop();
    // guard: shutdown-step-budget
    const outcome = await withTimeout(stopped, leftMs, 'budget spent').then(
      () => 'stopped' as const,
      (error: unknown) => (error instanceof Error && error.message === 'budget spent' ? ('abandoned' as const) : error),
    );
    if (outcome === 'stopped') continue;
    if (outcome === 'abandoned') {
      abandoned.push(step.name);
      // The step keeps running in the background until the process exits; its late failure is not news.
      stopped.catch(() => undefined);
      logger.warn({ step: step.name, budgetMs }, `shutdown budget spent: abandoning ${step.name} (${step.abandons})`);
      continue;
    }
    logger.error({ err: outcome, step: step.name }, `${step.name} failed to stop`);
    failure ??= outcome;
  }
  if (failure !== undefined) throw failure;
  return abandoned;
}
