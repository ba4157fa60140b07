/**
 * Optional bearer-token authentication of the internal API (API_PORT): with INTERNAL_API_TOKEN set,
 * every request must carry `Authorization: Bearer <token>`, or it is answered 401. Left open:
 * `/health` and `/ready`, because kubelet probes and load balancers cannot send a secret (a probe's
 * headers are plain text in the pod spec); `/ready` then tells a caller without the token only
 * whether the replica is ready, not which dependency failed and why. `/metrics` needs the token
 * (Prometheus sends it: ServiceMonitor `authorization`, scrape config `authorization.credentials_file`)
 * unless INTERNAL_API_METRICS_OPEN keeps it open for a scraper that cannot (the push hub's
 * `/dashboard/stream`, a live view of the same numbers, follows it). Open too: the files of the push
 * hub's console (`/dashboard` and its script, style, icon and chart library), which hold no data — a
 * browser cannot send a bearer token when it navigates; the page asks the operator for the token
 * and sends it on its own requests for data, which need it like any other.
 *
 * The comparison is constant-time over SHA-256 digests, so neither the content nor the length of
 * the token leaks through response timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bool, type Field, optionalStr } from './env-config.ts';
import { sendJson } from './http-response.ts';

export const internalApiAuthConfig = {
  INTERNAL_API_TOKEN: tokenField(
    'bearer token every internal API request must carry (`Authorization: Bearer …`), except /health and /ready; unset: the internal API is open (min 16 characters)',
  ),
  INTERNAL_API_METRICS_OPEN: bool(
    'with INTERNAL_API_TOKEN: serve /metrics without the token too (for scrapers that cannot send one)',
    false,
  ),
};

export interface InternalApiAuthSettings {
  INTERNAL_API_TOKEN: string | undefined;
  INTERNAL_API_METRICS_OPEN: boolean;
}

/** Paths every caller may ask, token or not. */
const probePaths = ['/health', '/ready'];
/** The metrics and the hub's live stream of them. */
const metricsPaths = ['/metrics', '/dashboard/stream'];
/** The push hub's console: static files without data (console-files.ts serves exactly these). */
export const CONSOLE_FILE_PATHS = [
  '/dashboard',
  '/dashboard/',
  '/dashboard/console.js',
  '/dashboard/console.css',
  '/dashboard/favicon.svg',
  '/dashboard/assets/vega.min.js',
  '/dashboard/assets/vega-lite.min.js',
  '/dashboard/assets/vega-interpreter.js',
];

export class InternalApiAuth {
  private readonly digest: Buffer;
  private readonly openPaths: Set<string>;

  constructor(token: string, options: { openMetrics?: boolean } = {}) {
    this.digest = sha256(token);
    const open = [...probePaths, ...CONSOLE_FILE_PATHS];
    this.openPaths = new Set(options.openMetrics ? [...open, ...metricsPaths] : open);
  }

  /** From the settings; undefined when INTERNAL_API_TOKEN is unset (the internal API is open). */
  static from(config: InternalApiAuthSettings): InternalApiAuth | undefined {
    if (config.INTERNAL_API_TOKEN === undefined) return undefined;
    return new InternalApiAuth(config.INTERNAL_API_TOKEN, { openMetrics: config.INTERNAL_API_METRICS_OPEN });
  }

  /** True when the request carries the token. */
  authorized(req: IncomingMessage): boolean {
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(req.headers.authorization ?? '');
    return m !== null && timingSafeEqual(sha256(m[1]!), this.digest);
  }

  /** A request handler for the front of the chain: answers 401 (and claims the request) when refused. */
  readonly refuseUnauthorized = (req: IncomingMessage, res: ServerResponse): boolean => {
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    if (this.openPaths.has(path) || this.authorized(req)) return false;
    sendJson(
      res,
      401,
      { error: 'the internal API needs Authorization: Bearer <INTERNAL_API_TOKEN>' },
      { 'www-authenticate': 'Bearer realm="gatehouse-internal"' },
    );
    return true;
  };
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function tokenField(description: string): Field<string | undefined> {
  const text = optionalStr(description);
  return {
    ...text,
    parse(raw) {
      const token = text.parse(raw);
      if (token !== undefined && token.length < 16) throw new Error('must be at least 16 characters');
      if (token !== undefined && /\s/.test(token)) throw new Error('must not contain white space');
      return token;
    },
  };
}
