import type { AiStudioService } from '../../ports/ai-studio-service';
import { AiStudioFailedError, AiStudioTimeoutError, AiStudioUnreachableError } from '../../studio/ai-studio-errors';

export interface AiStudioClientOptions {
  /** AI_STUDIO_BASE_URL: the service's origin (and optional path prefix). */
  baseUrl: string;
  /** AI_STUDIO_API_KEY, sent as a bearer token. */
  apiKey: string;
  /** AI_STUDIO_TIMEOUT_MS: the whole call, connect to last byte of the body. */
  timeoutMs: number;
}

// Errors that mean no connection was ever made, so the request was never sent.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH']);

function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  const visit = (value: unknown, depth: number) => {
    if (!value || typeof value !== 'object' || depth > 4) return;
    const code = (value as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    visit((value as { cause?: unknown }).cause, depth + 1);
    const errors = (value as { errors?: unknown }).errors;
    if (Array.isArray(errors)) for (const inner of errors) visit(inner, depth + 1);
  };
  visit(error, 0);
  return codes;
}

/**
 * The AI service over HTTP: `POST {baseUrl}/v1/generations` with `Authorization: Bearer {apiKey}`
 * and `{requestId, kind, durationSeconds?, full?, input}`. A 2xx JSON body is the result.
 * Rejects with AiStudioUnreachableError when no connection could be made (safe to retry),
 * AiStudioTimeoutError after timeoutMs, AiStudioFailedError for any other answer or a
 * connection that broke after the request may have been sent.
 */
export function createAiStudioClient(options: AiStudioClientOptions): AiStudioService {
  const url = new URL('v1/generations', options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
  return {
    async generate(request) {
      const signal = AbortSignal.timeout(options.timeoutMs);
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify(request),
          signal,
        });
      } catch (error) {
        if (signal.aborted) throw new AiStudioTimeoutError(options.timeoutMs, { cause: error });
        const codes = codesOf(error);
        if (codes.some((code) => NOT_SENT_CODES.has(code))) {
          throw new AiStudioUnreachableError(`the AI service cannot be reached (${codes.join(', ')})`, {
            cause: error,
          });
        }
        throw new AiStudioFailedError(`the AI call broke: ${codes.join(', ') || String(error)}`, undefined, {
          cause: error,
        });
      }
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        if (signal.aborted) throw new AiStudioTimeoutError(options.timeoutMs, { cause: error });
        throw new AiStudioFailedError('the AI answer broke off', response.status, { cause: error });
      }
      if (response.status < 200 || response.status >= 300) {
        throw new AiStudioFailedError(`the AI service answered ${response.status}`, response.status);
      }
      try {
        return JSON.parse(text) as unknown;
      } catch (error) {
        throw new AiStudioFailedError('the AI service answered 2xx without a JSON body', response.status, {
          cause: error,
        });
      }
    },
  };
}
