/**
 * Keep-alive ends when a host stops. `server.close()` stops the listener and closes the idle
 * connections, but a connection busy at that moment (an SSE stream, a long poll, a slow request)
 * is kept alive by Node once its response is done, and a client or balancer that keeps
 * connections (nginx's upstream `keepalive`) sends its next request over it: a stopping replica
 * then takes new connects until its store is closed under them. So from the stop on, every
 * response under way is the last of its connection: one not started yet says `connection: close`,
 * one whose headers went out ends its connection when it is done. HTTP/2 sessions are told by
 * GOAWAY instead (service-host.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export class KeepAliveEnding {
  private readonly underWay = new Set<ServerResponse>();
  private ending = false;

  /**
   * Every HTTP/1 request of the edge, as it arrives. The host calls `closed` from the one `close`
   * listener it adds to every response (service-host.ts), not from one of this class's own.
   */
  track(req: IncomingMessage, res: ServerResponse): void {
    if (req.httpVersionMajor !== 1) return;
    if (this.ending) {
      res.shouldKeepAlive = false;
      return;
    }
    this.underWay.add(res);
  }

  /** A response closed: it is under way no more. */
  closed(res: ServerResponse): void {
    this.underWay.delete(res);
  }

  /** The host stops: no response from now on leaves its connection open for another request. */
  end(): void {
    this.ending = true;
    for (const res of this.underWay) {
      if (!res.headersSent) {
        res.shouldKeepAlive = false;
        continue;
      }
      const socket = res.socket;
      if (socket === null) continue;
      if (res.writableFinished) socket.end();
      else res.once('finish', () => socket.end());
    }
    this.underWay.clear();
  }
}
