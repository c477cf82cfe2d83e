import { isLostJobLockError } from './worker-errors';

describe('isLostJobLockError', () => {
  it.each([
    'could not renew lock for job 42',
    'Missing lock for job inbox-17. moveToFinished',
    'Lock mismatch for job inbox-17. Cmd moveToDelayed from active',
  ])('treats BullMQ\'s "%s" as a lost lock', (message) => {
    expect(isLostJobLockError(new Error(message))).toBe(true);
  });

  it.each(['Connection is closed.', 'connect ECONNREFUSED 127.0.0.1:6379', 'Missing key for job 42. moveToFinished'])(
    'treats "%s" as a real error',
    (message) => {
      expect(isLostJobLockError(new Error(message))).toBe(false);
    },
  );
});
