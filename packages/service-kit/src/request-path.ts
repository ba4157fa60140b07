import type { IncomingMessage } from 'node:http';

/** The request's path without its query string. */
export function requestPath(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}
