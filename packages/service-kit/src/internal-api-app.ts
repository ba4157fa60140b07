/**
 * The internal API (API_PORT) as an express 5 app: the admin endpoints, `/health`, `/ready`,
 * `/metrics`, `/swagger.json` and the hub's dashboard. Express here, node:http on the public edge:
 * this surface is low-traffic and operators extend it (their own auth, request logging, extra
 * routes), and middleware is the form they know; the public hot paths keep their own handlers
 * because the benchmarks measure them (docs/architecture.md, "Which HTTP stack serves what").
 *
 * The order every request goes through (each counted in gw_http_responses_total when it closes):
 *   1. the per-value header limit (431), as on the public edge;
 *   2. the operator's setup (`configureInternalApi`, or the module INTERNAL_API_MIDDLEWARE names):
 *      it sees every request first, so its logging also sees the 401s;
 *   3. the bearer token (INTERNAL_API_TOKEN), except for the probes' paths;
 *   4. 415 for a body that is not JSON where the OpenAPI document says JSON (json-bodies.ts);
 *   5. the host's read-only paths, then each service's internal handler in order;
 *   6. 404 `{"error":"not found"}`; errors: HttpError's status, 503 + Retry-After when our own
 *      store or bus is down, 500 otherwise (the shapes the OpenAPI document gives).
 */
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Registry } from 'prom-client';
import { answerFailure } from './failure-answer.ts';
import type { RequestHandler } from './gateway-service.ts';
import type { Health } from './health.ts';
import { jsonOperations, refuseNonJsonBody } from './json-bodies.ts';
import { type HttpLimits, oversizedHeader } from './http-limits.ts';
import { sendJson, sendText } from './http-response.ts';
import type { InternalApiAuth } from './internal-api-auth.ts';
import { internalApiDocumentPath, sendDocument } from './openapi-documents.ts';
import type { Logger } from './logger.ts';
import { readOnlyMethod } from './read-only-method.ts';
import { countResponses } from './response-metrics.ts';

/**
 * An operator's hook: mounts middleware or routes on the internal API before anything of ours
 * (`app.use(myAuth)`, `app.use(requestLogger)`, `app.get('/version', …)`).
 */
export type InternalApiSetup = (app: Express) => void | Promise<void>;

export interface InternalApiAppOptions {
  logger: Logger;
  registry: Registry;
  health: Health;
  limits: HttpLimits;
  /** The OpenAPI document's bytes, served as they are. */
  apiDocument: Buffer;
  auth?: InternalApiAuth | undefined;
  /** Each service's internal paths, asked in order. */
  handlers: RequestHandler[];
  configure?: InternalApiSetup | undefined;
}

export async function createInternalApiApp(opts: InternalApiAppOptions): Promise<Express> {
  const { logger, registry, health, limits, apiDocument, auth } = opts;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Paths are exact as the document writes them: `/HEALTH` is not `/health`.
  app.set('case sensitive routing', true);

  const countResponse = countResponses(registry, 'internal');
  app.use((_req, res, next) => {
    countResponse(res);
    next();
  });
  app.use((req, res, next) => {
    const tooLong = oversizedHeader(req, limits);
    if (!tooLong) return next();
    res.shouldKeepAlive = false;
    sendText(res, 431, `header ${tooLong} is longer than ${limits.maxHeaderValueLength} bytes`);
  });
  await opts.configure?.(app);
  if (auth) app.use(claimOrNext(auth.refuseUnauthorized));
  const jsonBodies = jsonOperations(apiDocument);
  app.use(claimOrNext((req, res) => refuseNonJsonBody(jsonBodies, req, res)));

  readOnly(app, '/health', (_req, res) => sendText(res, 200, 'OK'));
  readOnly(app, '/ready', async (req, res) => {
    const report = await health.readiness();
    const detail = auth === undefined || auth.authorized(req);
    sendJson(res, report.ready ? 200 : 503, detail ? report : { ready: report.ready });
  });
  readOnly(app, '/metrics', async (_req, res) => {
    sendText(res, 200, await registry.metrics(), { 'content-type': registry.contentType });
  });
  readOnly(app, internalApiDocumentPath, (_req, res) => sendDocument(res, apiDocument));

  for (const handler of opts.handlers) app.use(claimOrNext(handler));
  app.use((_req: Request, res: Response) => sendJson(res, 404, { error: 'not found' }));
  app.use(errorAnswer(logger));
  return app;
}

/**
 * The module INTERNAL_API_MIDDLEWARE names (a path, relative to the working directory, or a
 * file: URL); its default export is the InternalApiSetup. Undefined when the setting is unset.
 */
export async function loadInternalApiSetup(
  modulePath: string | undefined,
): Promise<InternalApiSetup | undefined> {
  if (modulePath === undefined) return undefined;
  const url = modulePath.startsWith('file:') ? modulePath : pathToFileURL(resolve(modulePath)).href;
  const loaded = (await import(url)) as { default?: unknown };
  if (typeof loaded.default !== 'function')
    throw new Error(
      `INTERNAL_API_MIDDLEWARE ${modulePath}: the default export must be a function (app) => void`,
    );
  return loaded.default as InternalApiSetup;
}

/** GET and HEAD answer; any other method 405 with `allow: GET, HEAD`. */
function readOnly(
  app: Express,
  path: string,
  answer: (req: IncomingMessage, res: ServerResponse) => unknown,
): void {
  app.all(path, async (req, res) => {
    if (readOnlyMethod(req, res)) await answer(req, res);
  });
}

/** A service's handler as middleware: it answers and claims the request, or passes it on. */
function claimOrNext(handler: RequestHandler) {
  return async (req: Request, res: Response, next: NextFunction) => {
    if (!(await handler(req, res))) next();
  };
}

function errorAnswer(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) =>
    answerFailure(logger, err, req, res);
}
