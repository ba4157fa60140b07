/**
 * What happens to one request, stage by stage (one file each):
 *   route-stage      which endpoint, preflight, static content or error answers it
 *   cors-stage       the endpoint's CORS headers on every answer; the OPTIONS preflight
 *   exchange-stage   cookies, request header transform, correlation and trace ids
 *   body-stage       POST/PUT/PATCH bodies
 *   auth-stage       the endpoint's authentication function
 *   target-stage     secondaries, then the target: targets/{function,flow,relay}-target.ts
 *                    (targets/static-target.ts for static content)
 *   respond-stage    every answer, the endpoint timeout (408)
 *
 * Imports go one way: this file imports the stages; a stage imports respond-stage and the shared
 * types (pipeline-context, exchange, targets/target), never another stage that imports it back;
 * a target imports none of them but its own types (tools/test/import-cycles.test.ts keeps it so).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AsyncHttpRequest, type HttpRequestData, isThenable } from '@gatehouse/functions';
import { canonicaliseRequest } from '@gatehouse/service-kit';
import { selectAuthRoute } from '../endpoints/index.ts';
import { authenticate } from './auth-stage.ts';
import { bodyMethods, readBody } from './body-stage.ts';
import { answerPreflight } from './cors-stage.ts';
import { errorMessages } from '../http/index.ts';
import type { Exchange } from './exchange.ts';
import { openExchange } from './exchange-stage.ts';
import type { PipelineContext } from './pipeline-context.ts';
import { answerError, failed, plainError, startTimer } from './respond-stage.ts';
import { routeOf } from './route-stage.ts';
import { runTarget, unreachableService } from './target-stage.ts';
import { runStaticTarget } from './targets/index.ts';

export type { PipelineContext } from './pipeline-context.ts';

/**
 * The engine's `node:http` request listener. The target is made canonical first (service-kit
 * canonical-path.ts), once: routing, authentication, CORS, static content, the relay, functions,
 * flows and trace records all read that one path, the one the proxy in front matched, never the
 * client's spelling. A target with no canonical form is refused with a fixed message: the reason
 * goes to the log, the client's text nowhere.
 */
export function requestHandler(ctx: PipelineContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const startedAt = performance.now();
    const refused = canonicaliseRequest(req);
    if (refused !== undefined) {
      ctx.logger.info({ reason: refused }, 'request path refused');
      plainError(ctx, req, res, 400, errorMessages.badPath, startedAt);
      return;
    }
    const route = routeOf(ctx, req);
    switch (route.kind) {
      case 'endpoint':
        try {
          serveEndpoint(ctx, req, res, route, startedAt);
        } catch (err) {
          failed(ctx, res, err, startedAt);
        }
        return;
      case 'preflight':
        answerPreflight(ctx, req, res, route.endpoints, startedAt);
        return;
      case 'static': {
        const notFound = (answered: boolean) => {
          if (!answered) plainError(ctx, req, res, 404, errorMessages.notFound, startedAt);
        };
        let answered: boolean | Promise<boolean>;
        try {
          answered = runStaticTarget(ctx, req, res, route.path, route.queryString, startedAt);
        } catch (err) {
          failed(ctx, res, err, startedAt);
          return;
        }
        if (isThenable(answered))
          answered.then(notFound).catch((err: unknown) => failed(ctx, res, err, startedAt));
        else notFound(answered);
        return;
      }
      case 'error':
        plainError(ctx, req, res, route.status, route.message, startedAt, route.allow);
    }
  };
}

function serveEndpoint(
  ctx: PipelineContext,
  req: IncomingMessage,
  res: ServerResponse,
  route: Extract<ReturnType<typeof routeOf>, { kind: 'endpoint' }>,
  startedAt: number,
): void {
  const { endpoint } = route;
  const { x, data } = openExchange(
    ctx,
    req,
    res,
    endpoint,
    route.params,
    route.path,
    route.queryString,
    startedAt,
  );
  const missing = unreachableService(ctx, x, data.headers);
  if (missing !== undefined) {
    answerError(ctx, x, 503, `Service ${missing} not reachable`);
    return;
  }
  if (bodyMethods.has(data.method) || endpoint.authentication) {
    // Reading the body and authenticating take time: the endpoint timeout covers them too.
    startTimer(ctx, x);
    bodyThenAuth(ctx, req, x, data).catch((err: unknown) => {
      ctx.logger.error({ err, endpoint: endpoint.label }, 'request failed');
      answerError(ctx, x, 500, 'Internal error');
    });
    return;
  }
  runTarget(ctx, x, data, new AsyncHttpRequest(data), 'http.request', undefined);
}

async function bodyThenAuth(
  ctx: PipelineContext,
  req: IncomingMessage,
  x: Exchange,
  data: HttpRequestData,
): Promise<void> {
  if (bodyMethods.has(data.method) && !(await readBody(ctx, req, x, data))) return;
  const request = new AsyncHttpRequest(data);
  const selector = x.endpoint.authentication;
  if (!selector) {
    runTarget(ctx, x, data, request, 'http.request', undefined);
    return;
  }
  const authRoute = selectAuthRoute(selector, data.headers);
  const step = x.trace?.begin(authRoute, 'http.request', undefined);
  const verdict = await authenticate(ctx, x, authRoute, request, step);
  if (!verdict) return;
  data.session = verdict.session;
  runTarget(ctx, x, data, request, authRoute, step);
}
