/**
 * CORS: every answer of an endpoint with a `cors` set carries its headers; an OPTIONS request to a
 * path no endpoint serves with OPTIONS is the preflight, answered 204 from the first matching
 * endpoint's CORS set (405 when none has one).
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Endpoint } from '../endpoints/index.ts';
import { errorMessages } from '../http/index.ts';
import type { PipelineContext } from './pipeline-context.ts';
import { allowOf, plainError } from './respond-stage.ts';

/** A fresh response header object with the endpoint's CORS headers in it. */
export function corsHeaders(endpoint: Endpoint): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  if (endpoint.cors) for (const [name, value] of endpoint.cors.headers) headers[name] = value;
  return headers;
}

export function answerPreflight(
  ctx: PipelineContext,
  req: IncomingMessage,
  res: ServerResponse,
  endpoints: Endpoint[],
  startedAt: number,
): void {
  const cors = endpoints.find((e) => e.cors && e.cors.options.length > 0)?.cors;
  if (!cors) {
    plainError(ctx, req, res, 405, errorMessages.methodNotAllowed, startedAt, allowOf(endpoints));
    return;
  }
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of cors.options) headers[name] = value;
  res.writeHead(204, headers);
  res.end();
  ctx.metrics.answered(204, startedAt);
}
