import { Router } from 'express';
import { buildOpenApiDocument } from './openapi-document';

export const openApiPath = '/openapi.json';

/** `GET /openapi.json` (no key): the OpenAPI 3.1 document, built once per process. */
export function createOpenApiRoutes(): Router {
  const router = Router();
  let document: string | undefined;
  router.get(openApiPath, (_req, res) => {
    document ??= JSON.stringify(buildOpenApiDocument());
    res.type('application/json').send(document);
  });
  return router;
}
