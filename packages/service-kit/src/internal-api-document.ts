/**
 * The OpenAPI 3.1 description of the internal API (the spec: "an OpenAPI file (swagger.json) shipped
 * in the production image"). It lives here, beside the host that serves it as `GET /swagger.json`,
 * because the host is the one thing every service runs: each service, standalone or embedded,
 * answers the same whole document, so any replica behind the edge can serve it.
 */
import { readFile } from 'node:fs/promises';

export const internalApiDocumentPath = '/swagger.json';

const documentFile = new URL('./internal-api.openapi.json', import.meta.url);

/** The document's bytes as shipped; read once per host, so a missing file stops the start. */
export function readInternalApiDocument(): Promise<Buffer> {
  return readFile(documentFile);
}
