/**
 * The internal API's operations whose body is JSON answer 415 to any other content type, before
 * their handler runs. A web page can send a cross-origin POST without a preflight only as
 * text/plain, a form or multipart (a `no-cors` fetch, a form the operator's browser submits, a page
 * reached again by DNS rebinding): none of those is JSON, so none reaches a handler that would read
 * the body as JSON anyway (the session blacklist did, and killed sessions).
 *
 * Which operations: the OpenAPI document says, by the media types of each request body. One that
 * lists `*\/*` (the CloudEvents binary mode of `/vN/messages`, `/v3/responses`) takes any.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './http-response.ts';
import { requestPath } from './request-path.ts';

interface JsonOperation {
  method: string;
  path: RegExp;
  mediaTypes: readonly string[];
}

interface OpenApiBody {
  $ref?: string;
  content?: Record<string, unknown>;
}

interface OpenApiDocument {
  paths?: Record<string, Record<string, { requestBody?: OpenApiBody }>>;
  components?: { requestBodies?: Record<string, OpenApiBody> };
}

/** Every operation of the document whose request body is JSON only. */
export function jsonOperations(apiDocument: Buffer): JsonOperation[] {
  const doc = JSON.parse(apiDocument.toString('utf8')) as OpenApiDocument;
  const operations: JsonOperation[] = [];
  for (const [template, methods] of Object.entries(doc.paths ?? {}))
    for (const [method, operation] of Object.entries(methods)) {
      const body = resolve(doc, operation.requestBody);
      const mediaTypes = Object.keys(body?.content ?? {});
      if (mediaTypes.length === 0 || mediaTypes.includes('*/*')) continue;
      operations.push({ method: method.toUpperCase(), path: pathPattern(template), mediaTypes });
    }
  return operations;
}

/** Answers 415 (and returns true) when the request is for a JSON operation and its body is not JSON. */
export function refuseNonJsonBody(
  operations: readonly JsonOperation[],
  req: IncomingMessage,
  res: ServerResponse,
): boolean {
  const path = requestPath(req);
  const operation = operations.find((o) => o.method === req.method && o.path.test(path));
  if (operation === undefined || isAccepted(req.headers['content-type'], operation.mediaTypes)) return false;
  // The body is left unread: the connection is not reused for another request.
  res.shouldKeepAlive = false;
  sendJson(res, 415, { error: `the body must be JSON (content-type: ${operation.mediaTypes.join(' or ')})` });
  return true;
}

/** A listed media type, or any `+json` one where `application/json` is listed (RFC 6839). */
function isAccepted(contentType: string | undefined, mediaTypes: readonly string[]): boolean {
  const type = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (type === '') return false;
  return mediaTypes.includes(type) || (type.endsWith('+json') && mediaTypes.includes('application/json'));
}

function resolve(doc: OpenApiDocument, body: OpenApiBody | undefined): OpenApiBody | undefined {
  const ref = body?.$ref?.match(/^#\/components\/requestBodies\/(.+)$/)?.[1];
  return ref === undefined ? body : doc.components?.requestBodies?.[ref];
}

/** `/v3/apis/{id}` → a pattern matching the path with one segment in place of `{id}`. */
function pathPattern(template: string): RegExp {
  const escaped = template
    .split(/\{[^}]+\}/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]+');
  return new RegExp(`^${escaped}$`);
}
