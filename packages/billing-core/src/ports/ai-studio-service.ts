/** The external AI generation service (Tally is its client). */
export interface AiStudioService {
  /**
   * `POST /v1/generations`. Resolves with the 2xx JSON result; rejects on any other answer or
   * after the timeout. The request id lets the service deduplicate a retried call.
   */
  generate(request: {
    requestId: string;
    kind: string;
    durationSeconds?: number;
    full?: boolean;
    input: unknown;
  }): Promise<unknown>;
}
