/**
 * WebSocket upgrades on the public edge, for endpoints whose target is HTTP: matched like any
 * request (method + anchored path_regex, so a `GET` endpoint), logged (REQUEST_LOG), refused from a
 * browser origin CORS_ALLOWED_ORIGINS does not list (403: browsers apply no CORS to WebSockets),
 * checked for a token when the endpoint is secured (401 `Authentication failed.`, 503 when the
 * blacklist cannot be read), then forwarded with the same header rules and time-outs as any request
 * (upgrade-forwarder.ts): 502 `Bad gateway.` when the target cannot be reached or does not switch
 * protocols, 504 when it does not answer in time. An upgrade no HTTP endpoint matches, or to another
 * protocol than WebSocket, is not claimed (the host answers 404). `response_from` does not apply:
 * the target answers in the tunnel.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type CorsPolicy, type Logger, requestPath, type UpgradeHandler } from '@gatehouse/service-kit';
import { refusedTargetAnswer, type UpgradeForwarder, upstreamHeaders } from '../forwarding/index.ts';
import { type JwtGuard, type RouteMatch, type RouteTable, upstreamPath } from '../routing/index.ts';
import type { ProxyMetrics, RequestStatus } from './proxy-metrics.ts';
import type { RequestLog } from './request-log.ts';

export interface ProxyUpgradeDeps {
  table: () => RouteTable;
  forwarder: UpgradeForwarder;
  guard: JwtGuard;
  metrics: ProxyMetrics;
  requestLog: RequestLog | undefined;
  cors: CorsPolicy;
  /** PROXY_RECV_TIMEOUT: how long the target may take to answer, unless the endpoint sets response_timeout. */
  recvTimeoutMs: number;
  logger: Logger;
}

export function createProxyUpgrade(deps: ProxyUpgradeDeps): UpgradeHandler {
  return (req, socket, head) => {
    const path = requestPath(req);
    const hit = deps.table().match(req.method ?? 'GET', path);
    if (hit === undefined || hit.route.endpoint.target !== 'http' || !isWebSocket(req)) return false;
    // The server stops watching the socket once it hands an upgrade over: a reset would be uncaught.
    socket.on('error', () => {});
    const startedAt = performance.now();
    const { method, path_regex, target, response_from } = hit.route.endpoint;
    void serve(req, socket, head, hit, path, deps).then(
      (status) => deps.metrics.request({ method, path_regex, target, response_from }, status, startedAt),
      (err: unknown) => {
        deps.logger.error({ err }, 'proxying an upgrade failed');
        socket.destroy();
      },
    );
    return true;
  };
}

/**
 * Only WebSocket is tunnelled: after an `h2c` (or any other) upgrade a client could send the target
 * requests for any path, past the path and token checks (h2c smuggling).
 */
function isWebSocket(req: IncomingMessage): boolean {
  return req.headers.upgrade?.trim().toLowerCase() === 'websocket';
}

async function serve(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  hit: RouteMatch,
  path: string,
  deps: ProxyUpgradeDeps,
): Promise<RequestStatus> {
  deps.requestLog?.(req, hit.route, path);
  const { endpoint } = hit.route;
  if (!deps.cors.permitsUpgrade(req.headers.origin)) {
    answer(socket, 403, 'Origin not allowed.');
    return 'unauthorized';
  }
  if (hit.guard !== undefined) {
    const verdict = await deps.guard.check(req, hit.guard.api.auth);
    if (verdict === 'unavailable') {
      answer(socket, 503, 'Authentication unavailable.', { 'retry-after': '1' });
      return 'unavailable';
    }
    if (verdict === 'refused') {
      answer(socket, 401, 'Authentication failed.', { 'www-authenticate': 'Bearer' });
      return 'unauthorized';
    }
  }
  const origin = hit.route.origin!;
  const target = upstreamPath(hit, path, req.url ?? '/');
  if (target === undefined) {
    deps.logger.warn(
      { path, path_replacement: endpoint.path_replacement },
      'path_replacement gave no canonical path',
    );
    answer(socket, 502, 'Bad gateway.');
    return 'unreachable';
  }
  const outcome = await deps.forwarder.forward({
    req,
    socket,
    head,
    origin: origin.origin,
    path: target,
    headers: upstreamHeaders(req, { host: origin.host, addHeaders: hit.route.addHeaders }),
    headersTimeoutMs: endpoint.response_timeout ?? deps.recvTimeoutMs,
  });
  switch (outcome.kind) {
    case 'upgraded':
    case 'client_gone':
      return 'ok';
    case 'refused':
      deps.logger.warn(
        { origin: origin.origin, path: target, status: outcome.status },
        'target refused the upgrade',
      );
      answer(socket, 502, 'Bad gateway.');
      return 'unreachable';
    case 'unreachable':
      deps.logger.warn({ err: outcome.error, origin: origin.origin, path: target }, 'target unreachable');
      answer(socket, 502, 'Bad gateway.');
      return 'unreachable';
    case 'target_refused':
      deps.logger.warn({ err: outcome.error, origin: origin.origin }, 'target address refused');
      answer(socket, 502, refusedTargetAnswer);
      return 'target_refused';
    case 'timeout':
      answer(socket, 504, 'Timed out while waiting for the response.');
      return 'request_timeout';
  }
}

const reasons: Record<number, string> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** An HTTP answer on the raw socket of an upgrade that does not happen; the connection closes. */
function answer(socket: Duplex, status: number, text: string, headers: Record<string, string> = {}): void {
  if (socket.destroyed) return;
  let head = `HTTP/1.1 ${status} ${reasons[status]}\r\nconnection: close\r\ncontent-type: text/plain; charset=utf-8\r\nx-content-type-options: nosniff\r\n`;
  head += `content-length: ${Buffer.byteLength(text)}\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  socket.end(`${head}\r\n${text}`);
}
