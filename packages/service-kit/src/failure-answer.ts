/**
 * The answer to a request whose handler threw, the same on the public edge and the internal API:
 * an HttpError's status, 503 with Retry-After when our store or bus is down, a client error that
 * express or a middleware marked as such, 500 otherwise. A response already started is cut.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendUnavailable, unavailabilityOf } from './dependency-unavailable.ts';
import { HttpError, sendJson } from './http-response.ts';
import type { Logger } from './logger.ts';

export function answerFailure(logger: Logger, err: unknown, req: IncomingMessage, res: ServerResponse): void {
  const unavailable = unavailabilityOf(err);
  const clientStatus = clientErrorStatus(err);
  if (res.headersSent) {
    logger.error({ err, url: req.url }, 'request failed after response started');
    res.destroy();
  } else if (err instanceof HttpError) {
    sendJson(res, err.status, { error: err.message });
  } else if (unavailable) {
    logger.warn({ err, url: req.url }, 'dependency unavailable');
    sendUnavailable(res, unavailable.dependency);
  } else if (clientStatus !== undefined) {
    sendJson(res, clientStatus, { error: (err as Error).message });
  } else {
    logger.error({ err, url: req.url }, 'request failed');
    sendJson(res, 500, { error: 'internal error' });
  }
}

/**
 * The 4xx status an error from express or a middleware says it is: with `expose` (http-errors),
 * or a path parameter that is not valid percent-encoding (express's router: a URIError, 400).
 */
function clientErrorStatus(err: unknown): number | undefined {
  const e = err as { status?: unknown; statusCode?: unknown; expose?: unknown };
  const status = typeof e?.status === 'number' ? e.status : e?.statusCode;
  const told = e?.expose === true || err instanceof URIError;
  return typeof status === 'number' && status >= 400 && status < 500 && told ? status : undefined;
}
