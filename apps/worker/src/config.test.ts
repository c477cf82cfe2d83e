import { parseEnv } from '@tally/platform';
import { studioConfigProblems, workerEnvSchema } from './config';

const keyRequired = 'AI_STUDIO_API_KEY is required when AI_STUDIO_BASE_URL is set';
const stuckAfterTimeout =
  'STUDIO_STUCK_AFTER_MS must exceed AI_STUDIO_TIMEOUT_MS (or the sweeper refunds generations that are still running)';

/** The problems of a worker environment, parsed as the worker's composition root parses it. */
const problemsOf = (env: Record<string, string>) =>
  studioConfigProblems(parseEnv(workerEnvSchema, { DATABASE_URL: 'postgres://localhost/tally', ...env }));

describe('the AI Studio configuration cross-checks', () => {
  it('accepts the defaults (no AI service; the sweeper waits longer than the AI call)', () => {
    expect(problemsOf({})).toEqual([]);
  });

  it('accepts an AI service with its key', () => {
    expect(problemsOf({ AI_STUDIO_BASE_URL: 'https://ai.example.com', AI_STUDIO_API_KEY: 'k' })).toEqual([]);
  });

  it('refuses an AI service URL without its key', () => {
    expect(problemsOf({ AI_STUDIO_BASE_URL: 'https://ai.example.com' })).toEqual([keyRequired]);
  });

  it('refuses a stuck limit that does not exceed the AI timeout, so the sweeper never refunds a running generation', () => {
    expect(problemsOf({ AI_STUDIO_TIMEOUT_MS: '5000', STUDIO_STUCK_AFTER_MS: '5000' })).toEqual([stuckAfterTimeout]);
    expect(problemsOf({ AI_STUDIO_TIMEOUT_MS: '5000', STUDIO_STUCK_AFTER_MS: '4999' })).toEqual([stuckAfterTimeout]);
    expect(problemsOf({ AI_STUDIO_TIMEOUT_MS: '5000', STUDIO_STUCK_AFTER_MS: '5001' })).toEqual([]);
    // A stuck limit below the default timeout (120 s) is refused even when the timeout is not set.
    expect(problemsOf({ STUDIO_STUCK_AFTER_MS: '60000' })).toEqual([stuckAfterTimeout]);
  });

  it('lists every problem at once', () => {
    expect(
      problemsOf({
        AI_STUDIO_BASE_URL: 'https://ai.example.com',
        AI_STUDIO_TIMEOUT_MS: '9000',
        STUDIO_STUCK_AFTER_MS: '1000',
      }),
    ).toEqual([keyRequired, stuckAfterTimeout]);
  });
});
