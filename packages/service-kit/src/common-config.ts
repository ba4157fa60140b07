/** Settings every service reads the same way. */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { int, oneOf, optionalStr, port, str } from './env-config.ts';
import { trustedProxiesConfig } from './forwarding-trust.ts';
import { internalApiAuthConfig } from './internal-api-auth.ts';
import { defaultMaxJsonDepth, maxJsonDepthCeiling } from './json-depth.ts';
import { redactionConfig } from './secret-parameters.ts';
import { defaultMaxHeaderValueLength } from './http-limits.ts';

export const commonConfig = {
  LOG_FMT: oneOf('log format: JSON lines or Google Cloud Logging', ['JSON', 'GCL'] as const, 'JSON'),
  LOG_LEVEL: oneOf(
    'log level',
    ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const,
    'info',
  ),
  ...redactionConfig,
  HOST: str('address the HTTP servers bind to', '0.0.0.0'),
  API_PORT: port('internal API port: /health, /ready, /metrics and internal endpoints', 4010),
  ...internalApiAuthConfig,
  ...trustedProxiesConfig,
  INTERNAL_API_MIDDLEWARE: optionalStr(
    'path of an ES module whose default export (app) => void mounts your own express middleware or routes on the internal API, before its token check and routes',
  ),
  LISTEN_BACKLOG: int(
    "queue of connections the public edge's listeners accept before the process takes them (capped by the kernel's net.core.somaxconn): room for a reconnect storm",
    4096,
    { min: 1 },
  ),
  MAX_HEADER_VALUE_LENGTH: int(
    'longest accepted HTTP header value in bytes (431 beyond)',
    defaultMaxHeaderValueLength,
    {
      min: 1024,
    },
  ),
  MAX_JSON_DEPTH: int(
    `deepest nesting of objects and arrays accepted in events, subscription lists, API definitions and REST bodies (400 beyond); at most ${maxJsonDepthCeiling}`,
    defaultMaxJsonDepth,
    { min: 8, max: maxJsonDepthCeiling },
  ),
  REPLICA_ID: optionalStr(
    "this process's id in connection tokens and correlation ids (default: host name + random suffix); may stay the same across restarts (a pod name): ids carry a per-boot random part",
  ),
  HTTPS_CERTFILE: optionalStr(
    'PEM certificate (chain) file: with HTTPS_KEYFILE, the public edge also serves HTTPS and HTTP/2',
  ),
  HTTPS_KEYFILE: optionalStr('PEM private key file of HTTPS_CERTFILE'),
  HTTPS_KEYFILE_PASS: optionalStr('passphrase of an encrypted HTTPS_KEYFILE'),
  INBOUND_HTTPS_PORT: port('public HTTPS / HTTP/2 port (only with HTTPS_CERTFILE and HTTPS_KEYFILE)', 4001),
  GOOGLE_CLOUD_PROJECT: optionalStr(
    'Google Cloud project id: LOG_FMT=GCL lines name their trace as projects/<id>/traces/<trace id>',
  ),
  SHUTDOWN_DRAIN_TIMEOUT_MS: int(
    'how long shutdown waits for open connections to finish, counted from SIGTERM (the process exits at the latest 10 s after it)',
    10_000,
    { min: 0 },
  ),
};

/** A replica id unique per process: tokens issued by an earlier process must not reach this one. */
export function replicaId(configured: string | undefined): string {
  return configured ?? `${hostname()}-${randomBytes(3).toString('hex')}`;
}
