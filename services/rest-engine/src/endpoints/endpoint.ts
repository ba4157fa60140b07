/** A compiled rest.yaml endpoint: everything the request path needs, resolved once at start-up. */
import type { AuthSelector } from './authentication.ts';
import type { CorsSet } from './cors.ts';
import type { HeaderTransformSet } from './header-transform.ts';
import type { UrlPattern } from '../routing/index.ts';

export interface RelayTarget {
  /** `http://host:port` without path. */
  origin: URL;
  rewrite: readonly [string, string] | undefined;
  trustAllCert: boolean;
}

export interface Endpoint {
  /** `GET,POST /api/x` for logs and messages. */
  label: string;
  source: string;
  url: UrlPattern;
  /** Upper case, without OPTIONS (the preflight is answered from the CORS set). */
  methods: string[];
  primary: string;
  secondaries: string[];
  relay: RelayTarget | undefined;
  timeoutMs: number;
  /** Whether rest.yaml set `timeout` (a flow's deadline is then this timeout, else its own ttl). */
  timeoutGiven: boolean;
  cors: CorsSet | undefined;
  headers: HeaderTransformSet | undefined;
  authentication: AuthSelector | undefined;
  tracing: boolean;
  /** Lower-cased request header names. */
  traceIdHeader: string;
  traceparentHeader: string;
  correlationIdHeader: string;
  flow: string | undefined;
  upload: boolean;
}

export const defaultTimeoutMs = 30_000;
