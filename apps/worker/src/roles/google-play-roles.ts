import { oldestUnconsumedAgeSeconds } from '@tally/billing-core';
import { googlePlayConsumePass, googlePlayVoidedPass } from '../loops/google-play-loops';
import { runPeriodic } from '../loops/run-periodic';
import { loopHandle } from './loop-handle';
import type { WorkerRoleDefinition } from './worker-role';

/**
 * `google-play-consume`: consumes delivered Google Play purchases after their credit committed,
 * retried until Google says consumed (docs/stores-google-play.md). Exports how old the oldest
 * unconsumed one is: Google refunds a purchase neither acknowledged nor consumed at three days.
 */
export const googlePlayConsumeRole: WorkerRoleDefinition = {
  metricFamilies: ['googlePlay'],
  start({ db, logger, metrics, settings, ports }) {
    const options = settings.googlePlayConsume;
    const deps = { db, logger, metrics, googlePlay: ports.googlePlay };
    return {
      ...loopHandle(
        runPeriodic('google-play-consume', options.intervalMs, () => googlePlayConsumePass(deps, options), logger),
      ),
      async refreshGauges() {
        metrics.googlePlayOldestUnconsumedAge.set(await oldestUnconsumedAgeSeconds(db));
      },
    };
  },
};

/** `google-play-voided`: the daily pass over the Voided Purchases API (one replica at a time: a lease). */
export const googlePlayVoidedRole: WorkerRoleDefinition = {
  metricFamilies: ['googlePlay'],
  start({ db, outbox, logger, metrics, settings, ports }) {
    const deps = { db, outbox, logger, metrics, googlePlay: ports.googlePlay };
    return loopHandle(
      runPeriodic(
        'google-play-voided',
        settings.googlePlayVoidedPass.intervalMs,
        () => googlePlayVoidedPass(deps),
        logger,
      ),
    );
  },
};
