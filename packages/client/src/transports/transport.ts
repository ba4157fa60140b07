/** What the client asks of a transport, and how a transport reports back. */
import type { CloudEvent, Subscription } from '../types.ts';

export type TransportName = 'websocket' | 'sse' | 'longpolling';

export interface ConnectParams {
  /** The gateway's base URL (`https://gw.example.com`). */
  base: string;
  /** A JWT, sent as `Authorization: Bearer` (as `?jwt=` over WebSocket, which cannot set headers). */
  token: string | undefined;
  subscriptions: Subscription[] | undefined;
  /** The stream position to resume after. */
  lastEventId: string | undefined;
  /** Without a position: the last this many events the subscriptions match come first. */
  rewind?: number | undefined;
  /** Without a position: the newest kept event of each place it subscribes to comes first. */
  latest?: boolean | undefined;
  /** The previous connection's token: marks the connect as a reconnect for the rate limit. */
  connectionToken: string | undefined;
  /** The ack session the connection starts after the acknowledged position of. */
  ackSession?: string | undefined;
  /** A connection that hears nothing for this long is dropped (SSE, long-polling). */
  idleTimeoutMs: number;
}

/**
 * Why a connection dropped or could not open: `network` (the platform's connect or read failed; the
 * error is the `cause`), `idle` (nothing received for idleTimeoutMs), `open_timeout` (no answer
 * within openTimeoutMs), `ended` (the server ended it without saying why), `server_restart` (a
 * stopping replica: come back at once, elsewhere).
 */
export type DropCode = 'network' | 'idle' | 'open_timeout' | 'ended' | 'server_restart';

/** How a connection ended. */
export type TransportEnd =
  /**
   * Cut, or ended by the server; `retryMs` when the server said when to come back, `soon` when it
   * said to come back at once (a draining replica).
   */
  | { kind: 'dropped'; code: DropCode; reason: string; cause?: unknown; retryMs?: number; soon?: boolean }
  /** The server answered the connect with an error status. */
  | { kind: 'refused'; status: number; message: string; retryMs?: number }
  /** The server ended the connection because its JWT expired. */
  | { kind: 'expired' };

export interface TransportHandlers {
  /** An event of the stream, with its stream position when the transport gives one per event. */
  event(event: CloudEvent, position: string | undefined): void;
  /**
   * One of the gateway's own events (welcome, kill, close, resync), told by the transport's mark
   * that only the gateway sets, never by the event's type or source, which a producer writes; with
   * the stream position the connection is at, when the transport gives it.
   */
  gatewayEvent(event: CloudEvent, position: string | undefined): void;
  /** A position reached without an event of its own (a long-poll answer). */
  position(position: string): void;
  /** The connection answered without an event yet (a long poll's first answer): it works. */
  opened(): void;
  /** Called once, when the connection is over. */
  end(end: TransportEnd): void;
}

export interface OpenConnection {
  /** Ends the connection without calling `end`. */
  close(): void;
}

export interface Transport {
  name: TransportName;
  /**
   * Whether a new JWT given with `PUT …/subscriptions` keeps the open connection past the old one's
   * end (a long-poll connection's poll token ends with the JWT it was made with).
   */
  renewsInPlace: boolean;
  /** The transport's segment in `PUT /_gw/v1/connection/{…}/{token}/subscriptions`. */
  subscriptionsPath: string;
  open(params: ConnectParams, handlers: TransportHandlers): OpenConnection;
}

/** `Retry-After` (seconds) as ms, when the server sent one. */
export function retryAfterMs(value: string | null): number | undefined {
  const seconds = Number(value);
  return value && Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}
