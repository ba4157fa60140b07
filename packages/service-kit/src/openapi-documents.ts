/**
 * The two OpenAPI 3.1 documents every host serves, each as one file shipped beside it:
 * - the internal API's (internal-api.openapi.json) as `GET /swagger.json` on the internal API (the
 *   spec: "an OpenAPI file (swagger.json) shipped in the production image");
 * - the public edge's (public-edge.openapi.json) as `GET /_gw/v1/openapi.json` on the public port,
 *   beside `/_gw/health`.
 * They live here, beside the host, because the host is the one thing every service runs: each
 * service, standalone or embedded, answers the same whole document, so any replica behind the edge
 * can serve it.
 */
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';

export const internalApiDocumentPath = '/swagger.json';
export const publicEdgeDocumentPath = '/_gw/v1/openapi.json';

/** The document's bytes as shipped; read once per host, so a missing file stops the start. */
export function readInternalApiDocument(): Promise<Buffer> {
  return readFile(new URL('./internal-api.openapi.json', import.meta.url));
}

/** The public edge's document, read like the internal API's. */
export function readPublicEdgeDocument(): Promise<Buffer> {
  return readFile(new URL('./public-edge.openapi.json', import.meta.url));
}

/** Answers 200 with a document's bytes as they are (HEAD: the headers only). */
export function sendDocument(res: ServerResponse, document: Buffer): void {
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': document.length,
  });
  res.end(document);
}
