/**
 * Where a routed message goes on NATS: `<topic>.~t.<route>` in the topic's own stream, so one
 * stream (one sequence, one order) holds every message and a consumer can filter by route. A route
 * (a CloudEvent type) may hold any character; bytes a subject token cannot hold ('.', '*', '>',
 * white space, non-ASCII) and '~' itself are written `~XX` (hex), so the token is one and two
 * routes never share it. A route whose token would exceed MAX_ROUTE_TOKEN stays unrouted: every
 * subscriber reads it (a subject is part of every protocol line; it must stay small).
 */

export const MAX_ROUTE_TOKEN = 256;

/** The wildcard every routed subject of `topic` matches (one stream subject). */
export function routedSubjects(topic: string): string {
  return `${topic}.~t.*`;
}

/** The subject a message of `route` is published on; undefined: too long, publish unrouted. */
export function routeSubject(topic: string, route: string): string | undefined {
  const token = routeToken(route);
  return token === undefined ? undefined : `${topic}.~t.${token}`;
}

/**
 * A subject among the routed ones that no message is published on (no encoding makes '~n'): a
 * consumer filtered by it reads nothing.
 */
export function noRouteSubject(topic: string): string {
  return `${topic}.~t.~none`;
}

function routeToken(route: string): string | undefined {
  if (route.length > MAX_ROUTE_TOKEN) return undefined;
  let token = '';
  for (const byte of Buffer.from(route, 'utf8')) {
    token += isPlain(byte)
      ? String.fromCharCode(byte)
      : `~${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    if (token.length > MAX_ROUTE_TOKEN) return undefined;
  }
  return token === '' ? '~' : token;
}

/** Letters, digits, '-' and '_': kept as they are. */
function isPlain(byte: number): boolean {
  return (
    (byte >= 0x30 && byte <= 0x39) ||
    (byte >= 0x41 && byte <= 0x5a) ||
    (byte >= 0x61 && byte <= 0x7a) ||
    byte === 0x2d ||
    byte === 0x5f
  );
}
