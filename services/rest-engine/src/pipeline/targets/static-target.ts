/**
 * The static target: GET and HEAD of a path no endpoint declares, answered from the static content
 * folder (ETag and 304, or the no-cache headers for `no-cache-pages`), after the optional
 * static-content filter function. Unlike the endpoint targets it has no exchange: it writes its
 * own answer, except for a path with no file, which it leaves to the caller (a 404 like any
 * unknown path).
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { AsyncHttpRequest, isAppException, isEventEnvelope, isThenable } from '@gatehouse/functions';
import { HttpError } from '@gatehouse/service-kit';
import {
  parseCookies,
  parseQueryString,
  type ResponseTarget,
  writeError,
  writeResult,
} from '../../http/index.ts';
import { describeTimeout } from '../../endpoints/index.ts';
import { etagMatches, type StaticFile, servedPaths } from '../../static/index.ts';
import type { PipelineContext } from '../pipeline-context.ts';

const filterTimeoutMs = 10_000;
const noCacheHeaders = {
  'cache-control': 'no-cache, no-store',
  pragma: 'no-cache',
  expires: 'Thu, 01 Jan 1970 00:00:00 GMT',
};

/**
 * Serves `path` from the static folder; false, having answered nothing, when no file is there.
 * A file the cache holds, with no filter in front of it, is answered at once (no promise).
 */
export function runStaticTarget(
  ctx: PipelineContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  queryString: string,
  startedAt: number,
): boolean | Promise<boolean> {
  const serve = (file: StaticFile | undefined): boolean | Promise<boolean> => {
    if (!file) return false;
    // The rules decide on the file found, by every path that serves it, not on this request's
    // spelling; the filter is told the file's own path.
    const served = servedPaths(file.relative);
    const headers: OutgoingHttpHeaders = {};
    const filter = ctx.staticRules.filter;
    if (filter?.applies(served)) {
      return runFilter(ctx, req, res, filter.service, served[0]!, queryString, headers, startedAt).then(
        (stop) => stop || answerFile(ctx, req, res, file, served, headers, startedAt),
      );
    }
    return answerFile(ctx, req, res, file, served, headers, startedAt);
  };
  const found = ctx.staticFolder!.find(path);
  return isThenable(found) ? Promise.resolve(found).then(serve) : serve(found);
}

/** The file's answer: ETag and 304, or the no-cache headers for `no-cache-pages`. */
function answerFile(
  ctx: PipelineContext,
  req: IncomingMessage,
  res: ServerResponse,
  file: StaticFile,
  served: readonly string[],
  headers: OutgoingHttpHeaders,
  startedAt: number,
): true {
  headers['content-type'] = file.contentType;
  let status = 200;
  if (ctx.staticRules.noCache(served)) {
    Object.assign(headers, noCacheHeaders);
  } else {
    headers['etag'] = file.etag;
    if (etagMatches(req.headers['if-none-match'], file.etag)) status = 304;
  }
  headers['content-length'] = status === 304 ? 0 : file.body.length;
  res.writeHead(status, headers);
  if (status === 304 || req.method === 'HEAD') res.end();
  else res.end(file.body);
  ctx.metrics.answered(status, startedAt);
  return true;
}

/** Runs the static-content filter; returns true when it answered the request itself. */
async function runFilter(
  ctx: PipelineContext,
  req: IncomingMessage,
  res: ServerResponse,
  route: string,
  path: string,
  queryString: string,
  headers: OutgoingHttpHeaders,
  startedAt: number,
): Promise<boolean> {
  const reqHeaders = { ...(req.headers as Record<string, string>) };
  const cookies = parseCookies(reqHeaders['cookie']);
  delete reqHeaders['cookie'];
  const request = new AsyncHttpRequest({
    method: req.method!,
    url: path,
    ip: req.socket.remoteAddress ?? '',
    https: reqHeaders['x-forwarded-proto'] === 'https',
    headers: reqHeaders,
    cookies,
    queryParameters: queryString ? parseQueryString(queryString) : undefined,
    queryString,
    timeoutSeconds: filterTimeoutMs / 1000,
  });
  const target: ResponseTarget = {
    res,
    head: req.method === 'HEAD',
    accept: reqHeaders['accept'],
    headers,
    responseTransform: undefined,
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    const result = await Promise.race([
      ctx.registry.invoke(route, { my_route: route }, request),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new HttpError(408, `Timeout for ${describeTimeout(filterTimeoutMs)}`)),
          filterTimeoutMs,
        );
      }),
    ]);
    if (!isEventEnvelope(result)) return false;
    const status = result.getStatus() ?? 200;
    if (status === 200) {
      for (const [name, value] of Object.entries(result.getHeaders())) {
        if (!name.startsWith('my_') && name !== 'content-type') headers[name] = value;
      }
      return false;
    }
    ctx.metrics.answered(writeResult(target, result), startedAt);
    return true;
  } catch (err) {
    const status = isAppException(err) || err instanceof HttpError ? err.status : 500;
    if (status === 500) ctx.logger.error({ err, route }, 'static content filter failed');
    ctx.metrics.answered(writeError(target, status, (err as Error).message), startedAt);
    return true;
  } finally {
    clearTimeout(timer);
  }
}
