import type { PeriodicLoop } from '../loops/run-periodic';
import type { RoleHandle } from './worker-role';

/** The handle of a role that is one scheduled loop. */
export function loopHandle(loop: PeriodicLoop): RoleHandle {
  return { loop, stop: () => loop.stop() };
}
