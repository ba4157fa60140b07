/** CORS preflight answers for the hub's browser-facing endpoints. */
import type { ServerResponse } from 'node:http';

export function preflight(res: ServerResponse, origin: string, methods: string): true {
  res.writeHead(204, {
    'access-control-allow-origin': origin,
    'access-control-allow-methods': methods,
    'access-control-allow-headers': 'content-type, authorization, last-event-id',
    'access-control-allow-credentials': 'true',
    'access-control-max-age': '600',
  });
  res.end();
  return true;
}
