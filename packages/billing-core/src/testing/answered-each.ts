import { BatchItemFailure } from '@tally/platform/db';

/**
 * A batch's answers (debitTokensTogether, recordUsagesTogether, holdOperationsTogether) as each
 * caller would get them: a BatchItemFailure is thrown, as the api's batcher rejects that call.
 */
export function answeredEach<R>(results: readonly (R | BatchItemFailure)[]): R[] {
  return results.map((result) => {
    if (result instanceof BatchItemFailure) throw result.error;
    return result;
  });
}
