import type { InboxStatus } from '../db/schema';
import { type AttemptLane, type AttemptPlan, type JobFacts, laneOf, planAttempt } from './plan-attempt';

const fresh = { status: 'received' as InboxStatus, attempts: 0 };
const row = (status: InboxStatus, attempts: number) => ({ status, attempts });

describe('planAttempt: only a first run of a fresh row skips the claim', () => {
  const cases: [string, JobFacts, Parameters<typeof planAttempt>[1], AttemptPlan][] = [
    ['first run, fresh row', { runsStarted: 1, stalls: 0 }, fresh, 'one-transaction'],
    ['first run, row not read yet', { runsStarted: 1, stalls: 0 }, 'unread', 'one-transaction'],
    ['first run, row missing', { runsStarted: 1, stalls: 0 }, undefined, 'claim'],
    [
      'first run, row with an attempt spent (a relay re-enqueue)',
      { runsStarted: 1, stalls: 0 },
      row('received', 1),
      'claim',
    ],
    ['first run, row claimed by another run', { runsStarted: 1, stalls: 0 }, row('processing', 1), 'claim'],
    ['first run, row finished', { runsStarted: 1, stalls: 0 }, row('processed', 1), 'claim'],
    ['first run, row parked', { runsStarted: 1, stalls: 0 }, row('failed', 5), 'claim'],
    [
      'stalled re-run (its worker died in the one transaction), fresh row',
      { runsStarted: 1, stalls: 1 },
      fresh,
      'claim',
    ],
    ['stalled re-run, row not read yet', { runsStarted: 2, stalls: 1 }, 'unread', 'claim'],
    ['retry after a thrown error, fresh row', { runsStarted: 2, stalls: 0 }, fresh, 'claim'],
    ['retry after a thrown error, row not read yet', { runsStarted: 3, stalls: 0 }, 'unread', 'claim'],
  ];
  it.each(cases)('%s', (_name, facts, read, plan) => {
    expect(planAttempt(facts, read)).toBe(plan);
  });
});

describe('laneOf: first runs coalesce, stalled re-runs wait in the stalled lane, other re-runs run alone', () => {
  const cases: [JobFacts, AttemptLane][] = [
    [{ runsStarted: 1, stalls: 0 }, 'first-runs'],
    [{ runsStarted: 0, stalls: 0 }, 'first-runs'],
    [{ runsStarted: 1, stalls: 1 }, 'stalled'],
    [{ runsStarted: 4, stalls: 2 }, 'stalled'],
    [{ runsStarted: 2, stalls: 0 }, 'alone'],
  ];
  it.each(cases)('%j → %s', (facts, lane) => {
    expect(laneOf(facts)).toBe(lane);
  });
});
