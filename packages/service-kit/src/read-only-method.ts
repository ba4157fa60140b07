/**
 * The read-only paths (`/health`, `/metrics`, `/swagger.json`, the dashboard …) answer GET and HEAD
 * only. Any other method gets 405 with `allow`, as the router answers for its own paths: answering
 * `POST /health` or `TRACE /metrics` with 200 contradicts the OpenAPI document (schemathesis found it).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './http-response.ts';

/** True for GET and HEAD; otherwise answers 405 and returns false. */
export function readOnlyMethod(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return true;
  sendJson(res, 405, { error: `method ${req.method} not allowed` }, { allow: 'GET, HEAD' });
  return false;
}
