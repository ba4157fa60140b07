/**
 * Runs one or more GatewayServices behind the two HTTP surfaces: the public edge and the internal
 * API. The internal API always answers `/health`, `/ready`, `/metrics` and `/swagger.json` (the
 * OpenAPI document of the whole internal API); the public edge answers `/_gw/health` and
 * `/_gw/v1/openapi.json` (the OpenAPI document of the whole public edge). Requests go
 * to each service in order until one claims the path. A request that fails because the store or a
 * bus is unreachable is answered 503 with Retry-After (dependency-unavailable.ts), anything else
 * unexpected 500.
 *
 * Shutdown, in this order: `/ready` turns false; the public edge stops accepting connections and
 * keeps none alive past the response under way (keep-alive-ending.ts; the internal API stays up, so
 * probes and metrics still answer while draining); every service stops
 * (the push hub moves its clients away over part of the drain window); open requests get what is
 * left of the drain window (`drainTimeoutMs`, counted from the start of shutdown), then are cut;
 * the internal API closes; the closeables (buses, store) close last.
 *
 * The internal API is an express app (internal-api-app.ts); `configureInternalApi` mounts an
 * operator's middleware on it. With `internalApiAuth` (INTERNAL_API_TOKEN), it asks for a bearer
 * token on every path but the probes' (internal-api-auth.ts). The public edge stays on node:http.
 *
 * With `tls`, the public edge also listens with TLS, offering HTTP/2 (ALPN `h2`) and HTTP/1.1.
 * Services then get node's HTTP/2 compatibility objects (Http2ServerRequest/Response) for h2
 * requests: they have the IncomingMessage/ServerResponse methods services use, but no
 * connection-specific headers (`connection`, `keep-alive`, `transfer-encoding` …) may be set.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createSecureServer, type Http2SecureServer, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Registry } from 'prom-client';
import type { GatewayService, RequestHandler } from './gateway-service.ts';
import type { Health } from './health.ts';
import {
  defaultMaxHeaderValueLength,
  type HttpLimits,
  nodeMaxHeaderSize,
  oversizedHeader,
} from './http-limits.ts';
import { answerFailure } from './failure-answer.ts';
import { carriesStream } from './http-parser-release.ts';
import { KeepAliveEnding } from './keep-alive-ending.ts';
import { sendJson, sendText } from './http-response.ts';
import type { InternalApiAuth } from './internal-api-auth.ts';
import { createInternalApiApp, type InternalApiSetup } from './internal-api-app.ts';
import type { Logger } from './logger.ts';
import {
  publicEdgeDocumentPath,
  readInternalApiDocument,
  readPublicEdgeDocument,
  sendDocument,
} from './openapi-documents.ts';
import { NoSniffResponse } from './no-sniff-response.ts';
import { readOnlyMethod } from './read-only-method.ts';
import { exportReadiness } from './readiness-metrics.ts';
import { responseCounter } from './response-metrics.ts';
import { canonicaliseRequest, requestPath } from './request-path.ts';
import type { TlsSettings } from './tls-settings.ts';

export interface HostOptions {
  services: GatewayService[];
  logger: Logger;
  registry: Registry;
  health: Health;
  host?: string;
  /** Public edge port; omit to run no public edge (a service with only internal paths). */
  publicPort?: number;
  /**
   * Listen backlog of the public edge (LISTEN_BACKLOG): connections the kernel queues before the
   * process accepts them. Node's 511 drops the SYNs of a reconnect storm, and each dropped client
   * waits out TCP's retransmission back-off (1, 3, 7, 15 s).
   */
  backlog?: number;
  apiPort: number;
  limits?: HttpLimits;
  /** Closed after every service has stopped: bus, store, tracing … */
  closeables?: Array<{ close(): Promise<void> | void }>;
  /** How long stop() waits for open connections before cutting them, counted from its start. */
  drainTimeoutMs?: number;
  /** HTTPS + HTTP/2 on the public edge as well (needs publicPort). */
  tls?: TlsSettings | undefined;
  /** Bearer-token authentication of the internal API (INTERNAL_API_TOKEN); absent: open. */
  internalApiAuth?: InternalApiAuth | undefined;
  /** The operator's middleware and routes on the internal API, mounted before ours (INTERNAL_API_MIDDLEWARE). */
  configureInternalApi?: InternalApiSetup | undefined;
}

export interface RunningHost {
  publicPort: number | undefined;
  /** The HTTPS / HTTP/2 port of the public edge, when TLS is configured. */
  publicTlsPort?: number | undefined;
  apiPort: number;
  stop(): Promise<void>;
  /** The step of the stop under way (a service's stop, a drain, a closeable's close), for a forced exit's log. */
  stopStep(): string | undefined;
}

export async function startHost(opts: HostOptions): Promise<RunningHost> {
  const { services, logger, registry, health } = opts;
  const limits = opts.limits ?? { maxHeaderValueLength: defaultMaxHeaderValueLength };
  const host = opts.host ?? '0.0.0.0';
  exportReadiness(registry, health);

  const internalApi = await createInternalApiApp({
    logger,
    registry,
    health,
    limits,
    apiDocument: await readInternalApiDocument(),
    auth: opts.internalApiAuth,
    handlers: services.flatMap((s) => (s.internal ? [s.internal] : [])),
    configure: opts.configureInternalApi,
  });
  const publicHandlers: RequestHandler[] = [
    answerEdgeHealth,
    ...(opts.publicPort === undefined ? [] : [answerEdgeDocument(await readPublicEdgeDocument())]),
    ...services.flatMap((s) => (s.public ? [s.public] : [])),
  ];

  for (const s of services) await s.start?.();

  const servers: Server[] = [];
  const api = createServer({ maxHeaderSize: nodeMaxHeaderSize(limits) }, (req, res) => {
    res.setHeader(...noSniff);
    // Its ids (session ids above all) may hold a `/`: kept encoded in their segment, and no open
    // path of the internal API has one (internal-api-auth.ts).
    const badPath = canonicaliseRequest(req, { encodedSlashes: 'keep' });
    if (badPath === undefined) internalApi(req, res);
    else sendJson(res, 400, { error: `Bad request: ${badPath}` });
  });
  servers.push(api);
  trackConnections(api);
  const apiPort = await listen(api, opts.apiPort, host);

  let publicPort: number | undefined;
  let publicTlsPort: number | undefined;
  let secure: SecureEdge | undefined;
  const keepAlive = new KeepAliveEnding();
  if (opts.publicPort !== undefined) {
    const handleRequest = dispatcher(
      publicHandlers,
      limits,
      logger,
      keepAlive,
      responseCounter(registry, 'public'),
    );
    const handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      // node:http stops watching an upgrade's socket when it hands it over: a reset nobody hears
      // would end the process. Whoever takes the socket adds its own handling after this one.
      socket.on('error', () => socket.destroy());
      if (oversizedHeader(req, limits)) return rejectUpgrade(socket, 431);
      if (canonicaliseRequest(req) !== undefined) return rejectUpgrade(socket, 400);
      for (const s of services) if (s.upgrade?.(req, socket, head)) return;
      rejectUpgrade(socket, 404);
    };
    const edge = createServer(
      { maxHeaderSize: nodeMaxHeaderSize(limits), ServerResponse: NoSniffResponse },
      handleRequest,
    );
    edge.on('upgrade', handleUpgrade);
    servers.push(edge);
    trackConnections(edge);
    publicPort = await listen(edge, opts.publicPort, host, opts.backlog);
    if (opts.tls !== undefined) {
      secure = secureEdge(opts.tls, limits, handleRequest, handleUpgrade);
      publicTlsPort = await listen(secure.server, opts.tls.port, host, opts.backlog);
    }
  }
  logger.info({ publicPort, publicTlsPort, apiPort, services: services.map((s) => s.name) }, 'listening');

  let stopping: Promise<void> | undefined;
  let step: string | undefined;
  const stop = () => {
    stopping ??= (async () => {
      const deadline = Date.now() + (opts.drainTimeoutMs ?? 10_000);
      health.startDraining();
      keepAlive.end();
      const edges = servers.filter((s) => s !== api);
      const edgesClosed = edges.map(whenClosed);
      for (const server of edges) server.close();
      for (const server of edges) server.closeIdleConnections();
      secure?.startClosing();
      for (const s of [...services].reverse()) {
        step = `the ${s.name} service's stop`;
        try {
          await s.stop?.();
        } catch (err) {
          logger.error({ err, service: s.name }, 'service did not stop cleanly');
        }
      }
      const left = () => Math.max(0, deadline - Date.now());
      step = 'draining the public edge';
      await Promise.all([drain(edges, edgesClosed, left()), secure?.drain(left())]);
      const apiClosed = whenClosed(api);
      api.close();
      api.closeIdleConnections();
      step = 'draining the internal API';
      await drain([api], [apiClosed], Math.min(left(), 1000));
      for (const c of opts.closeables ?? []) {
        step = `closing ${c.constructor?.name ?? 'a closeable'}`;
        await c.close();
      }
      step = undefined;
      logger.info('stopped');
    })();
    return stopping;
  };
  return { publicPort, publicTlsPort, apiPort, stop, stopStep: () => step };
}

interface SecureEdge {
  server: Http2SecureServer;
  /** Stops new streams: GOAWAY to HTTP/2 sessions, idle HTTP/1.1 sockets closed. */
  startClosing(): void;
  drain(timeoutMs: number): Promise<void>;
}

/** The TLS listener of the public edge: HTTP/2 by ALPN, HTTP/1.1 for the other clients. */
function secureEdge(
  tls: TlsSettings,
  limits: HttpLimits,
  handleRequest: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>,
  handleUpgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void,
): SecureEdge {
  const server = createSecureServer(
    {
      cert: tls.cert,
      key: tls.key,
      ...(tls.passphrase !== undefined && { passphrase: tls.passphrase }),
      allowHTTP1: true,
      Http1ServerResponse: NoSniffResponse,
      maxSessionMemory: 64,
      settings: { maxHeaderListSize: nodeMaxHeaderSize(limits) },
    },
    handleRequest as unknown as Parameters<typeof createSecureServer>[1],
  );
  server.on('upgrade', handleUpgrade);
  trackConnections(server);
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  let closed: Promise<void> = Promise.resolve();
  return {
    server,
    startClosing() {
      closed = whenClosed(server);
      server.close();
      for (const session of sessions) session.close();
    },
    async drain(timeoutMs) {
      const timer = setTimeout(() => cutConnections(server), timeoutMs);
      await closed;
      clearTimeout(timer);
    },
  };
}

const noSniff = ['x-content-type-options', 'nosniff'] as const;

function dispatcher(
  handlers: RequestHandler[],
  limits: HttpLimits,
  logger: Logger,
  keepAlive: KeepAliveEnding,
  countResponse: (this: ServerResponse) => void,
) {
  // One `close` listener for every response (`this` is the response), doing both jobs: no closure
  // per request, and one listener fewer held by each open stream.
  const closed = function (this: ServerResponse) {
    keepAlive.closed(this);
    countResponse.call(this);
  };
  /** The handlers from `next` on, once handler `next - 1` said it would tell later (`handling`). */
  const answerLater = async (
    handling: Promise<boolean>,
    next: number,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> => {
    try {
      if (await handling) return;
      for (let i = next; i < handlers.length; i++) {
        const handled = handlers[i]!(req, res);
        if (handled === true || (handled !== false && (await handled))) return;
      }
      sendJson(res, 404, { error: 'not found' });
    } catch (err) {
      answerFailure(logger, err, req, res);
    }
  };
  // Not async: a request every handler answers at once (a reconnect storm's SSE connects) costs no
  // promise and no turn of the microtask queue here.
  return (req: IncomingMessage, res: ServerResponse): void | Promise<void> => {
    // Read behind a stream on its connection (pipelined with it): it could never be answered.
    if (carriesStream(req.socket)) {
      req.socket.destroy();
      return;
    }
    keepAlive.track(req, res);
    // A response closes once: `on` spares the wrapper `once` makes per call (a bound function).
    res.on('close', closed);
    // Every answer of the edge, errors that echo input included (a proxied one too: a browser
    // must not sniff an upstream's text into HTML either). An HTTP/1.1 response adds it as its head
    // is written (no-sniff-response.ts); an HTTP/2 one has no such class.
    if (!(res instanceof NoSniffResponse)) res.setHeader(...noSniff);
    const tooLong = oversizedHeader(req, limits);
    if (tooLong) {
      res.shouldKeepAlive = false;
      return sendText(res, 431, `header ${tooLong} is longer than ${limits.maxHeaderValueLength} bytes`);
    }
    const badPath = canonicaliseRequest(req);
    if (badPath !== undefined) return sendText(res, 400, `Bad request: ${badPath}`);
    try {
      for (let i = 0; i < handlers.length; i++) {
        const handled = handlers[i]!(req, res);
        // Most handlers say at once that a request is not theirs, or answer it at once: only one
        // that tells later (a promise) makes the rest wait for it.
        if (handled === true) return;
        if (handled !== false) return answerLater(handled, i + 1, req, res);
      }
      sendJson(res, 404, { error: 'not found' });
    } catch (err) {
      answerFailure(logger, err, req, res);
    }
  };
}

function answerEdgeHealth(req: IncomingMessage, res: ServerResponse): boolean {
  if (requestPath(req) !== '/_gw/health') return false;
  if (!readOnlyMethod(req, res)) return true;
  sendText(res, 200, 'OK');
  return true;
}

/** Before the services, so no API definition of the proxy can take the path over. */
function answerEdgeDocument(document: Buffer): RequestHandler {
  return (req, res) => {
    if (requestPath(req) !== publicEdgeDocumentPath) return false;
    if (readOnlyMethod(req, res)) sendDocument(res, document);
    return true;
  };
}

function rejectUpgrade(socket: Duplex, status: number): void {
  const reason = { 400: 'Bad Request', 431: 'Request Header Fields Too Large' }[status] ?? 'Not Found';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nconnection: close\r\n${noSniff.join(': ')}\r\ncontent-length: 0\r\n\r\n`,
  );
}

function listen(
  server: Server | Http2SecureServer,
  port: number,
  host: string,
  backlog = 4096,
): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, backlog }, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/**
 * Every connection a server has open, until it closes. A stop's deadline cuts them all: node's
 * `closeAllConnections` lists only connections that still have an HTTP parser, not those taken
 * over by an upgrade (a WebSocket client that never answers the close held a stop open) nor
 * streams that gave their parser back (http-parser-release.ts).
 */
const openConnections = new WeakMap<Server | Http2SecureServer, Set<Socket>>();

function trackConnections(server: Server | Http2SecureServer): void {
  openConnections.set(server, new Set());
  server.on('connection', (socket: Socket) => {
    openConnections.get(server)?.add(socket);
    socket.on('close', forgetConnection);
  });
}

/** Shared by every connection (`this`): a connection gets no closure of its own. */
function forgetConnection(this: Socket & { server?: Server }): void {
  if (this.server) openConnections.get(this.server)?.delete(this);
}

function cutConnections(server: Server | Http2SecureServer): void {
  for (const socket of openConnections.get(server) ?? []) socket.destroy();
}

/**
 * When a server has closed: its listener and then its last connection. Asked for before `close()`,
 * which ends `listening` at once, long before the connections end.
 */
function whenClosed(server: Server | Http2SecureServer): Promise<void> {
  return new Promise<void>((r) => (server.listening ? server.once('close', () => r()) : r()));
}

/**
 * Waits for closing servers to finish their open requests (`closed`, from whenClosed), then cuts
 * what is still open after the timeout.
 */
async function drain(servers: Server[], closed: Promise<void>[], timeoutMs: number): Promise<void> {
  const timer = setTimeout(() => {
    for (const s of servers) cutConnections(s);
  }, timeoutMs);
  await Promise.all(closed);
  clearTimeout(timer);
}
