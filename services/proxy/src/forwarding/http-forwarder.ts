/**
 * Forwards one request to an HTTP target with undici and streams both ways: the request body goes
 * up as it arrives (a 50 MB upload is never held in memory), the response body comes down chunk by
 * chunk with backpressure (the target is paused while the client is slow), so SSE and chunked
 * responses reach the client as they are produced.
 *
 * Outcomes: `responded` (the target's answer was passed on), `held` (the caller asked to keep a
 * status for itself, e.g. the 202 of a target that answers later through response_from),
 * `unreachable` (no connection, reset: answer 502), `target_refused` (its address is not one
 * PROXY_TARGET_ALLOW lets through, target-connect.ts: 502), `timeout` (no response headers in time: 504),
 * `client_gone`, and `broken` (failed after the response had started: the client connection is cut,
 * which is the only honest signal left).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
import { downstreamHeaders, type HeaderMap } from './forward-headers.ts';
import type { TargetAllowList } from './target-allow-list.ts';
import { guardedConnector, TargetRefusedError } from './target-connect.ts';

export type ForwardOutcome =
  | { kind: 'responded'; status: number }
  | { kind: 'held'; status: number }
  | { kind: 'unreachable'; error: Error }
  | { kind: 'target_refused'; error: TargetRefusedError }
  | { kind: 'timeout' }
  | { kind: 'client_gone' }
  | { kind: 'broken'; error: Error };

export interface ForwardRequest {
  req: IncomingMessage;
  res: ServerResponse;
  origin: string;
  /** Path and query string. */
  path: string;
  headers: HeaderMap;
  /** How long the target may take to send its response headers. */
  headersTimeoutMs: number;
  /** Statuses the caller handles itself: their body is discarded, not passed on. */
  hold?: (status: number) => boolean;
}

export interface HttpForwarderOptions {
  connectionsPerOrigin: number;
  connectTimeoutMs: number;
  /** Longest pause between body chunks of a response (0: none). */
  bodyIdleTimeoutMs: number;
  /** Where targets may be (PROXY_TARGET_ALLOW), checked on the address each connection goes to. */
  targets: TargetAllowList;
}

const timeoutCodes = new Set(['UND_ERR_HEADERS_TIMEOUT']);

export class HttpForwarder {
  private readonly agent: Agent;
  private readonly bodyIdleTimeoutMs: number;

  constructor(options: HttpForwarderOptions) {
    this.bodyIdleTimeoutMs = options.bodyIdleTimeoutMs;
    this.agent = new Agent({
      connections: options.connectionsPerOrigin,
      connect: guardedConnector(options.targets, { timeout: options.connectTimeoutMs }),
      keepAliveTimeout: 4_000,
      pipelining: 1,
    });
  }

  forward(request: ForwardRequest): Promise<ForwardOutcome> {
    return new Promise((resolve) => {
      const { req } = request;
      const method = req.method ?? 'GET';
      const handler = new ForwardHandler(request, resolve);
      this.agent.dispatch(
        {
          origin: request.origin,
          path: request.path,
          method,
          headers: request.headers,
          body: hasBody(req) ? req : null,
          headersTimeout: request.headersTimeoutMs,
          bodyTimeout: this.bodyIdleTimeoutMs,
        },
        handler,
      );
    });
  }

  /** Lets forwarded requests finish (an SSE stream may never): after `timeoutMs` cuts the rest. */
  async close(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((r) => {
      timer = setTimeout(() => r('late'), timeoutMs);
    });
    const result = await Promise.race([this.agent.close(), late]);
    clearTimeout(timer);
    if (result === 'late') await this.agent.destroy();
  }
}

/**
 * A request has a body when it says so; GETs without content-length go up without one. An HTTP/2
 * request says so by not ending its stream with the headers (it needs no content-length).
 */
function hasBody(req: IncomingMessage): boolean {
  if (req.httpVersionMajor === 2)
    return (req as unknown as { stream?: { endAfterHeaders?: boolean } }).stream?.endAfterHeaders === false;
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

class ForwardHandler implements Dispatcher.DispatchHandler {
  private readonly request: ForwardRequest;
  private readonly resolve: (outcome: ForwardOutcome) => void;
  private controller: Dispatcher.DispatchController | undefined;
  private started = false;
  private held: number | undefined;
  private settled = false;
  private clientGone = false;

  constructor(request: ForwardRequest, resolve: (outcome: ForwardOutcome) => void) {
    this.request = request;
    this.resolve = resolve;
    request.res.once('close', this.onClientClose);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.clientGone) controller.abort(new Error('client closed the connection'));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (this.request.hold?.(statusCode)) {
      this.held = statusCode;
      return;
    }
    this.started = true;
    this.request.res.writeHead(statusCode, downstreamHeaders(headers));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.held !== undefined) return;
    const { res } = this.request;
    if (!res.write(chunk)) {
      controller.pause();
      res.once('drain', () => controller.resume());
    }
  }

  onResponseEnd(): void {
    if (this.held !== undefined) {
      this.settle({ kind: 'held', status: this.held });
      return;
    }
    const { res } = this.request;
    res.end();
    this.settle({ kind: 'responded', status: res.statusCode });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.settle(this.failure(error));
  }

  private failure(error: Error): ForwardOutcome {
    if (this.clientGone) return { kind: 'client_gone' };
    if (this.started) {
      this.request.res.destroy(error);
      return { kind: 'broken', error };
    }
    if (error instanceof TargetRefusedError) return { kind: 'target_refused', error };
    const code = (error as { code?: string }).code;
    if (code !== undefined && timeoutCodes.has(code)) return { kind: 'timeout' };
    return { kind: 'unreachable', error };
  }

  private readonly onClientClose = (): void => {
    if (this.settled || this.request.res.writableFinished) return;
    this.clientGone = true;
    this.controller?.abort(new Error('client closed the connection'));
  };

  private settle(outcome: ForwardOutcome): void {
    if (this.settled) return;
    this.settled = true;
    this.request.res.off('close', this.onClientClose);
    this.resolve(outcome);
  }
}
