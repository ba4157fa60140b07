/**
 * The one CORS policy of every public surface (push hub transports, publisher, proxy).
 *
 * Two modes, never mixed, because browsers refuse `Access-Control-Allow-Origin: *` together with
 * `Access-Control-Allow-Credentials: true`:
 * - an allow-list (CORS_ALLOWED_ORIGINS): a request's Origin is echoed, with credentials, only when
 *   it is on the list (an exact origin or a `scheme://*.domain` pattern); every answer says
 *   `Vary: Origin` so a cache never hands one origin's answer to another;
 * - no list: `*` without credentials. Browsers then send no cookies cross-origin and keep none
 *   they are given, so cross-origin cookie long-polling needs the list.
 * WebSocket upgrades are not covered by CORS in browsers: with a list, `permitsUpgrade` refuses a
 * browser's upgrade from an origin not on it.
 *
 * Not the `cors` npm package: it is callback middleware that sets headers one by one, and sends
 * credentials with `*` when asked to; the hot paths here spread one header object into writeHead.
 * socket.io's engine does use it, so `socketIoOptions` translates this policy into its options.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What a preflight (OPTIONS) of one endpoint allows. */
export interface PreflightRules {
  /** Allowed methods, e.g. `GET` or `POST, PUT`. */
  methods: string;
  /** Allowed request headers, e.g. `content-type, authorization`. */
  headers: string;
  /** How long a browser may cache the preflight, in seconds (default 600). */
  maxAgeSeconds?: number;
}

/** socket.io's (engine.io's) `cors` option, as the `cors` package reads it. */
export interface SocketIoCorsOptions {
  origin:
    | string
    | ((origin: string | undefined, cb: (err: Error | null, allow?: string | false) => void) => void);
  credentials: boolean;
  methods: string;
  allowedHeaders: string;
  maxAge: number;
}

const DEFAULT_MAX_AGE_SECONDS = 600;
const anyOrigin: Readonly<Record<string, string>> = Object.freeze({ 'access-control-allow-origin': '*' });
const varyOnly: Readonly<Record<string, string>> = Object.freeze({ vary: 'Origin' });
/** The serialized origin a browser sends: lower-case scheme and host, no default port. */
const originShape = /^([a-z][a-z0-9+.-]*):\/\/([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/;
const labelsShape = /^[a-z0-9-]+(\.[a-z0-9-]+)*$/;

interface OriginPattern {
  scheme: string;
  /** `.example.com`: the host must end with it, after at least one label of its own. */
  suffix: string;
  port: string | undefined;
}

export class CorsPolicy {
  /** True with an allow-list: allowed origins are echoed with credentials. */
  readonly credentials: boolean;
  private readonly exact: Set<string>;
  private readonly patterns: OriginPattern[];

  /** Entries as CORS_ALLOWED_ORIGINS holds them; an invalid one throws a message that names it. */
  constructor(entries: readonly string[]) {
    this.exact = new Set();
    this.patterns = [];
    for (const entry of entries) {
      const pattern = parsePattern(entry);
      if (pattern) this.patterns.push(pattern);
      else this.exact.add(normalizeOrigin(entry));
    }
    this.credentials = entries.length > 0;
  }

  /** The Access-Control-Allow-Origin value for a request's Origin, or undefined: none is sent. */
  allowOrigin(origin: string | undefined): string | undefined {
    if (!this.credentials) return '*';
    if (origin === undefined) return undefined;
    return this.exact.has(origin) || this.patterns.some((p) => matches(p, origin)) ? origin : undefined;
  }

  /** CORS headers of an actual (non-preflight) answer to this request; spread them into writeHead. */
  headers(req: IncomingMessage): Readonly<Record<string, string>> {
    if (!this.credentials) return anyOrigin;
    const origin = this.allowOrigin(req.headers.origin);
    if (origin === undefined) return varyOnly;
    return {
      'access-control-allow-origin': origin,
      'access-control-allow-credentials': 'true',
      vary: 'Origin',
    };
  }

  /** Answers a preflight: 204 with the rules; without allow-origin when the origin is not allowed. */
  preflight(req: IncomingMessage, res: ServerResponse, rules: PreflightRules): true {
    res.writeHead(204, {
      ...this.headers(req),
      'access-control-allow-methods': rules.methods,
      'access-control-allow-headers': rules.headers,
      'access-control-max-age': String(rules.maxAgeSeconds ?? DEFAULT_MAX_AGE_SECONDS),
      'content-length': '0',
    });
    res.end();
    return true;
  }

  /**
   * Whether a WebSocket upgrade may proceed. Browsers always send Origin on one and do not apply
   * CORS to it; other clients usually send none. Without a list every upgrade may.
   */
  permitsUpgrade(origin: string | undefined): boolean {
    return !this.credentials || origin === undefined || this.allowOrigin(origin) !== undefined;
  }

  /** The same policy as socket.io's `cors` option (engine.io applies it with the `cors` package). */
  socketIoOptions(rules: PreflightRules): SocketIoCorsOptions {
    const common = {
      methods: rules.methods,
      allowedHeaders: rules.headers,
      maxAge: rules.maxAgeSeconds ?? DEFAULT_MAX_AGE_SECONDS,
    };
    if (!this.credentials) return { origin: '*', credentials: false, ...common };
    return {
      origin: (origin, cb) => cb(null, this.allowOrigin(origin) ?? false),
      credentials: true,
      ...common,
    };
  }
}

/**
 * Whether literal CORS headers (the REST engine's rest.yaml sets) pair `Allow-Origin: *` with
 * `Allow-Credentials: true`: browsers refuse every such answer, the mistake this policy prevents.
 */
export function pairsWildcardWithCredentials(headers: Iterable<readonly [string, string]>): boolean {
  let wildcard = false;
  let credentials = false;
  for (const [name, value] of headers) {
    const n = name.toLowerCase();
    if (n === 'access-control-allow-origin' && value.trim() === '*') wildcard = true;
    if (n === 'access-control-allow-credentials' && value.trim().toLowerCase() === 'true') credentials = true;
  }
  return wildcard && credentials;
}

/** `scheme://*.domain[:port]`, or undefined for an entry without a wildcard. */
function parsePattern(entry: string): OriginPattern | undefined {
  if (!entry.includes('*')) return undefined;
  const m = /^([a-z][a-z0-9+.-]*):\/\/\*\.([^:/]+)(?::(\d{1,5}))?$/.exec(entry.toLowerCase());
  if (!m) {
    throw new Error(
      `${JSON.stringify(entry)} is not an origin pattern: a wildcard is allowed only as scheme://*.domain[:port]` +
        ' (a bare * would allow every origin with credentials)',
    );
  }
  const [, scheme, domain, port] = m as unknown as [string, string, string, string | undefined];
  // *.com or *.localhost would take in names nobody here owns.
  if (!labelsShape.test(domain) || !domain.includes('.')) {
    throw new Error(`${JSON.stringify(entry)}: the domain after *. must have at least two labels`);
  }
  return { scheme, suffix: `.${domain}`, port: port === undefined ? undefined : normalizePort(scheme, port) };
}

/** The origin as a browser serializes it; throws unless the entry is scheme://host[:port]. */
function normalizeOrigin(entry: string): string {
  if (entry === 'null')
    throw new Error('"null" is not allowed: it is the origin of sandboxed and file: pages');
  let text = entry.toLowerCase();
  if (text.endsWith('/')) text = text.slice(0, -1);
  const m = originShape.exec(text);
  if (!m) throw new Error(`${JSON.stringify(entry)} is not an origin (scheme://host[:port], no path)`);
  const [, scheme, host, port] = m as unknown as [string, string, string, string | undefined];
  const kept = port === undefined ? undefined : normalizePort(scheme, port);
  return `${scheme}://${host}${kept === undefined ? '' : `:${kept}`}`;
}

/** Browsers leave out the scheme's default port. */
function normalizePort(scheme: string, port: string): string | undefined {
  const n = Number(port);
  if (n < 1 || n > 65535) throw new Error(`port ${port} is out of range`);
  if ((scheme === 'http' && n === 80) || (scheme === 'https' && n === 443)) return undefined;
  return String(n);
}

function matches(p: OriginPattern, origin: string): boolean {
  const m = originShape.exec(origin);
  if (!m || m[1] !== p.scheme || m[3] !== p.port) return false;
  const host = m[2]!;
  return host.length > p.suffix.length && host.endsWith(p.suffix) && labelsShape.test(host);
}
