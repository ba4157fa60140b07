/**
 * The route stage: decides what answers a request from its method and path. A declared endpoint;
 * else an OPTIONS preflight for a path whose endpoints lack the method; else static content for
 * GET and HEAD when there is a static folder; else an error (405 with Allow, 400 for a malformed
 * path, 404).
 */
import type { IncomingMessage } from 'node:http';
import type { Endpoint } from '../endpoints/index.ts';
import { errorMessages, exceedsParameters, tooManyParameters } from '../http/index.ts';
import type { PipelineContext } from './pipeline-context.ts';
import { allowOf } from './respond-stage.ts';

export type Route =
  | {
      kind: 'endpoint';
      endpoint: Endpoint;
      params: Record<string, string> | undefined;
      path: string;
      queryString: string;
    }
  | { kind: 'preflight'; endpoints: Endpoint[] }
  | { kind: 'static'; path: string; queryString: string }
  | { kind: 'error'; status: number; message: string; allow?: string };

export function routeOf(ctx: PipelineContext, req: IncomingMessage): Route {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const queryString = q < 0 ? '' : url.slice(q + 1);
  const method = req.method ?? 'GET';
  if (exceedsParameters(queryString, ctx.maxParameters))
    return { kind: 'error', status: 400, message: tooManyParameters('The query string', ctx.maxParameters) };
  const found = ctx.table.lookup(method, path);
  if (found.kind === 'found')
    return { kind: 'endpoint', endpoint: found.endpoint, params: found.params, path, queryString };
  if (found.kind === 'method-not-allowed') {
    if (method === 'OPTIONS') return { kind: 'preflight', endpoints: found.endpoints };
    return {
      kind: 'error',
      status: 405,
      message: errorMessages.methodNotAllowed,
      allow: allowOf(found.endpoints),
    };
  }
  if (found.kind === 'bad-path') return { kind: 'error', status: 400, message: errorMessages.badPath };
  if ((method === 'GET' || method === 'HEAD') && ctx.staticFolder)
    return { kind: 'static', path, queryString };
  return { kind: 'error', status: 404, message: errorMessages.notFound };
}
