/**
 * The body stage: POST, PUT and PATCH bodies are read (parsed by content type, kept raw for the
 * relay, streamed for uploads), up to the engine's size and count limits. A body refused before it
 * was read to its end (413, 400) is answered, read on briefly and its connection closed
 * (respond-stage, lingerThenClose).
 */
import type { IncomingMessage } from 'node:http';
import type { HttpRequestData } from '@gatehouse/functions';
import { HttpError } from '@gatehouse/service-kit';
import { queryMap, readRequestBody } from '../http/index.ts';
import type { Exchange } from './exchange.ts';
import type { PipelineContext } from './pipeline-context.ts';
import { answerError } from './respond-stage.ts';

export const bodyMethods = new Set(['POST', 'PUT', 'PATCH']);

/** Reads the body into `data`; returns false when the request has been answered instead. */
export async function readBody(
  ctx: PipelineContext,
  req: IncomingMessage,
  x: Exchange,
  data: HttpRequestData,
): Promise<boolean> {
  const { endpoint } = x;
  try {
    const parsed = await readRequestBody(req, {
      limit: ctx.maxBodySize,
      maxJsonDepth: ctx.maxJsonDepth,
      maxParameters: ctx.maxParameters,
      maxXmlNodes: ctx.maxXmlNodes,
      maxJsonMembers: ctx.maxJsonMembers,
      multipart: ctx.multipart,
      upload: endpoint.upload,
      raw: endpoint.relay !== undefined,
      // The caller is still sending: the answer goes out, then the connection closes (respond-stage).
      onStreamTooLarge: (err) => answerError(ctx, x, err.status, err.message),
    });
    data.body = parsed.body;
    data.contentLength = parsed.contentLength;
    data.stream = parsed.stream;
    data.streamRoute = parsed.streamRoute;
    data.files = parsed.files;
    if (parsed.formFields)
      data.queryParameters = Object.assign(queryMap(), data.queryParameters, parsed.formFields);
  } catch (err) {
    const status = err instanceof HttpError ? err.status : 400;
    answerError(ctx, x, status, (err as Error).message);
    return false;
  }
  return !x.done;
}
