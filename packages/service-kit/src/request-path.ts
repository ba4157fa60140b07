import type { IncomingMessage } from 'node:http';
import { canonicalTarget, type PathPolicy } from './canonical-path.ts';

/** The request's path without its query string (canonical once `canonicaliseRequest` has run). */
export function requestPath(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/**
 * Replaces the request's target with its canonical path and the query as sent (canonical-path.ts),
 * before any handler reads it, so every stage sees one path. Returns why the target was refused
 * (answer 400), or undefined. `*` (asterisk-form, meant for `OPTIONS *`) is refused too: no handler
 * serves it, and a route regex such as `.*` would have matched it unread.
 */
export function canonicaliseRequest(req: IncomingMessage, policy: PathPolicy = {}): string | undefined {
  const url = req.url ?? '/';
  const target = canonicalTarget(url, policy);
  if (!target.ok) return target.reason;
  req.url = target.path + target.query;
  return undefined;
}
