/**
 * The relay's undici dispatch handler: turns the upstream answer into the relay's result.
 * - An answer that declares a `content-length` of at most `maxBufferBytes` is taken in whole and
 *   given as one Buffer: the engine answers it with one write, without a stream between the two
 *   sockets (undici's request() made an AsyncResource, a Readable and an abort listener per call,
 *   and pipe() wrote headers and body apart: most of a small relayed answer's CPU, --cpu-prof,
 *   issue 25). An upstream that sends less than it declared fails the request: the client gets an
 *   error answer, not a 200 cut short.
 * - Any other answer (larger, or no length given) is a stream, passed on as it comes: the upstream
 *   is paused while the client does not read, and destroying the stream (the client left) aborts
 *   the upstream request.
 * The request's signal (endpoint timeout, client gone) aborts the upstream request until the
 * answer is over.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';

export interface UpstreamAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer | Readable;
}

type Controller = Dispatcher.DispatchController;

export class RelayAnswer implements Dispatcher.DispatchHandler {
  private readonly resolve: (answer: UpstreamAnswer) => void;
  private readonly reject: (err: Error) => void;
  private readonly maxBufferBytes: number;
  private readonly signal: AbortSignal;
  private controller: Controller | undefined;
  private settled = false;
  /** The answer taken in whole: its status, headers and the chunks so far. */
  private buffered: { status: number; headers: IncomingHttpHeaders; chunks: Buffer[] } | undefined;
  private stream: Readable | undefined;
  /** The upstream answer came to its end (a stream destroyed after it aborts nothing). */
  private ended = false;

  constructor(
    signal: AbortSignal,
    maxBufferBytes: number,
    resolve: (answer: UpstreamAnswer) => void,
    reject: (err: Error) => void,
  ) {
    this.signal = signal;
    this.maxBufferBytes = maxBufferBytes;
    this.resolve = resolve;
    this.reject = reject;
  }

  onRequestStart(controller: Controller): void {
    this.controller = controller;
    if (this.signal.aborted) controller.abort(abortReason(this.signal));
    else this.signal.addEventListener('abort', this.onAbort);
  }

  onResponseStart(controller: Controller, status: number, headers: IncomingHttpHeaders): void {
    if (status < 200) return; // 1xx: informational, the answer is still to come
    const length = Number(headers['content-length']);
    // 204 and 304 have no body whatever length they declare (a 304's is the full answer's): as
    // streams they keep it, where a Buffer's length (0) would replace it.
    const bodiless = status === 204 || status === 304;
    if (!bodiless && headers['content-length'] !== undefined && length <= this.maxBufferBytes) {
      this.buffered = { status, headers, chunks: [] };
      return;
    }
    this.stream = new Readable({
      read: () => controller.resume(),
      destroy: (err, callback) => {
        if (!controller.aborted && !this.ended) controller.abort(err ?? new Error('relay stream destroyed'));
        this.done();
        callback(err);
      },
    });
    // A body dropped unread (a HEAD, a client gone) may still fail; the writer hears the errors of
    // a body it pipes, this the rest.
    this.stream.on('error', () => undefined);
    this.settle({ status, headers, body: this.stream });
  }

  onResponseData(controller: Controller, chunk: Buffer): void {
    if (this.buffered) this.buffered.chunks.push(chunk);
    else if (this.stream && !this.stream.push(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    this.ended = true;
    if (this.buffered) {
      const { status, headers, chunks } = this.buffered;
      this.done();
      this.settle({ status, headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
    } else if (this.stream) {
      this.stream.push(null);
      this.done();
    }
  }

  onResponseError(_controller: Controller, err: Error): void {
    this.done();
    if (!this.settled) {
      this.settled = true;
      this.reject(err);
    } else this.stream?.destroy(err);
  }

  private settle(answer: UpstreamAnswer): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve(answer);
  }

  /** The request is over: the signal no longer concerns it. */
  private done(): void {
    this.signal.removeEventListener('abort', this.onAbort);
  }

  private readonly onAbort = (): void => {
    this.controller?.abort(abortReason(this.signal));
  };
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('relay request aborted');
}
