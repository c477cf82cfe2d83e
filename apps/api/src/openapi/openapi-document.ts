import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  type ResponseConfig,
  type RouteConfig,
} from '@asteasolutions/zod-to-openapi';
import { appWebhookDataSchemas, appWebhookMessageTypes } from '@tally/billing-core';
import { requestIdHeader } from '@tally/platform';
import { z } from 'zod';
import { type Route, userRoutePrefix } from '../http/define-route';
import { idempotencyKeyHeader, idempotentReplayedHeader } from '../http/idempotency';
import { userIdSchema } from '../http/params';
import { type AnswerDoc, errorBodySchema, errorDoc } from '../http/route-doc';
import { apiRoutes } from '../routes/api-routes';

const securitySchemes = { appKey: '/v1', adminKey: '/admin' } as const;

/** Answers every route of a surface can give, besides its own (auth, the body parser, the database). */
function sharedAnswers(route: Route): Record<number, AnswerDoc> {
  const surface = route.path.startsWith('/v1/') ? 'app' : 'admin';
  const answers: Record<number, AnswerDoc> = {
    400: errorDoc('a bad request (the URL holds a NUL, a bad parameter)', ['invalid_request']),
    401: errorDoc(`no valid ${surface} key as a bearer token`, ['unauthorized']),
    429: errorDoc('this client failed authentication too often (API_FAILED_AUTH_*); retry later', [
      'too_many_failed_attempts',
    ]),
    500: errorDoc('an unexpected failure (logged with the Request-Id)', ['internal_error']),
    503: errorDoc('the database cannot be reached right now; retry later', ['database_unavailable']),
  };
  if (route.method !== 'get') {
    answers[400] = errorDoc('a body that is not JSON, or bad input', [
      'invalid_request',
      'malformed_json',
      'unsupported_encoding',
      'request_aborted',
      'invalid_content_length',
    ]);
    answers[413] = errorDoc('a body over 100 kB', ['payload_too_large']);
    answers[415] = errorDoc('a body sent with a Content-Type other than application/json', ['unsupported_media_type']);
  }
  if (route.method !== 'get' && surface === 'admin') {
    // auditAdminActions: every state-changing admin request writes its audit row first.
    answers[503] = merge(
      answers[503],
      errorDoc('the audit row of this action could not be written; nothing was done', ['audit_unavailable']),
    );
  }
  if (route.idempotency) {
    answers[400] = merge(
      answers[400],
      errorDoc('an Idempotency-Key that is not 1 to 255 visible ASCII characters', ['invalid_idempotency_key']),
    );
    answers[409] = errorDoc('a request with this Idempotency-Key is still running; retry later', [
      'idempotency_key_in_use',
    ]);
    answers[422] = errorDoc('this Idempotency-Key was used with another method, path or body', [
      'idempotency_key_reused',
    ]);
  }
  return answers;
}

/** Two descriptions of one status: the error codes joined, or either body. */
function merge(a: AnswerDoc | undefined, b: AnswerDoc): AnswerDoc {
  if (!a) return b;
  const headers = a.headers || b.headers ? { ...a.headers, ...b.headers } : undefined;
  if (a.codes && b.codes) {
    const codes = [...new Set([...a.codes, ...b.codes])] as [string, ...string[]];
    return { description: a.description, schema: errorBodySchema(codes), codes, ...(headers ? { headers } : {}) };
  }
  return {
    description: `${a.description}; or ${b.description}`,
    schema: z.union([a.schema, b.schema]),
    ...(headers ? { headers } : {}),
  };
}

/** A route's answers as the document gives them: its own joined with the shared ones. */
export function answersOf(route: Route): Record<number, AnswerDoc> {
  const answers: Record<number, AnswerDoc> = { ...route.answers };
  for (const [status, shared] of Object.entries(sharedAnswers(route))) {
    answers[Number(status)] = merge(answers[Number(status)], shared);
  }
  return answers;
}

function responseOf(route: Route, answer: AnswerDoc): ResponseConfig {
  const headers: Record<string, z.ZodType> = {
    [requestIdHeader]: z
      .string()
      .describe("this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…)"),
  };
  if (route.idempotency) {
    headers[idempotentReplayedHeader] = z
      .literal('true')
      .optional()
      .describe('present when this is the answer kept under the Idempotency-Key, replayed');
  }
  for (const [name, header] of Object.entries(answer.headers ?? {}))
    headers[name] = header.schema.optional().describe(header.description);
  return {
    description: answer.description,
    headers: z.object(headers),
    content: { 'application/json': { schema: answer.schema } },
  };
}

function routeConfigOf(route: Route): RouteConfig {
  const v1 = route.path.startsWith(`${userRoutePrefix}/`);
  const params = v1 ? z.object({ userId: userIdSchema, ...route.params }) : route.params && z.object(route.params);
  const request: NonNullable<RouteConfig['request']> = {};
  if (params) request.params = params;
  if (route.query) request.query = route.query as z.ZodObject;
  if (route.idempotency) {
    request.headers = z.object({
      [idempotencyKeyHeader]: z
        .string()
        .optional()
        .describe(
          '1 to 255 visible ASCII characters: a retry with the same key gets the first answer (docs/idempotency.md)',
        ),
    });
  }
  if (route.body) request.body = { required: true, content: { 'application/json': { schema: route.body } } };
  const responses: Record<string, ResponseConfig> = {};
  for (const [status, answer] of Object.entries(answersOf(route))) responses[status] = responseOf(route, answer);
  return {
    method: route.method,
    path: route.path,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [v1 ? 'app' : 'admin'],
    security: [{ [v1 ? 'appKey' : 'adminKey']: [] }],
    request,
    responses,
  };
}

/** The body POSTed to the app for one message type (toAppWebhookBody). */
export function appWebhookBodySchema(type: (typeof appWebhookMessageTypes)[number]) {
  return z.strictObject({
    type: z.literal(type),
    timestamp: z.iso.datetime().describe('the ISO time of the change (the same on every attempt)'),
    data: appWebhookDataSchemas[type],
  });
}

function registerAppWebhooks(registry: OpenAPIRegistry): void {
  for (const type of appWebhookMessageTypes) {
    registry.registerWebhook({
      method: 'post',
      path: type,
      summary: `${type}: POSTed to APP_WEBHOOK_URL (Standard Webhooks; docs/app-webhooks.md)`,
      tags: ['app webhooks'],
      request: {
        headers: z.object({
          'webhook-id': z.string().describe('msg_ and 32 hex digits, the same on every attempt of a message'),
          'webhook-timestamp': z.string().describe('Unix seconds of this attempt'),
          'webhook-signature': z
            .string()
            .describe('one v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}"> per secret, space separated'),
        }),
        body: { required: true, content: { 'application/json': { schema: appWebhookBodySchema(type) } } },
      },
      responses: {
        '2XX': { description: 'delivered: any 2xx answer ends the retries' },
        default: { description: 'not delivered: retried with backoff, then marked failed' },
      },
    });
  }
}

/**
 * The OpenAPI 3.1 document of the api (`GET /openapi.json`), generated from the route list
 * (routes/api-routes.ts): the definitions' paths and the zod schemas they parse their input with
 * and type their answers by (zod-to-openapi), never written by hand.
 */
export function buildOpenApiDocument(
  routes: readonly Route[] = apiRoutes,
): ReturnType<OpenApiGeneratorV31['generateDocument']> {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'appKey', {
    type: 'http',
    scheme: 'bearer',
    description: `An app key (APP_API_KEYS) as a bearer token, for ${securitySchemes.appKey}.`,
  });
  registry.registerComponent('securitySchemes', 'adminKey', {
    type: 'http',
    scheme: 'bearer',
    description: `An admin key (ADMIN_API_KEYS) as a bearer token, for ${securitySchemes.adminKey}.`,
  });
  // guard: openapi-route-described
  for (const route of routes) registry.registerPath(routeConfigOf(route));
  registerAppWebhooks(registry);
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Tally API',
      // Shown beside the title by /docs (Redoc): "Tally API (v1)", the version of the /v1 paths;
      // a bare "1" read as a copy's number, "Tally API (1)".
      version: 'v1',
      description:
        'The product API (/v1, app keys) and the operator API (/admin, admin keys) of Tally. Every answer ' +
        'carries Request-Id; every error is {"error":{"code","message"}}. The outbound app webhooks are under `webhooks`.',
    },
    tags: [
      { name: 'app', description: 'The product API: one user at a time, app key' },
      { name: 'admin', description: 'The operator API: admin key, every change audited' },
      { name: 'app webhooks', description: 'What Tally POSTs to the app (Standard Webhooks)' },
    ],
  });
}
