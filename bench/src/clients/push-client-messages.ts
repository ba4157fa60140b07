/** What the orchestrator and the push client process (push-client.ts) tell each other over IPC. */

export type PushTransport = 'sse' | 'ws';

/**
 * How the connections reach the hub: the raw `net` socket of raw-connection.ts (plain HTTP/1.1 or
 * the WebSocket upgrade), HTTP/1.1 over TLS with node:https, or HTTP/2 over TLS with node:http2,
 * `streamsPerSession` SSE streams on each session (one session per client origin, as a browser
 * shares one between its tabs). `ca` is the PEM the hub's certificate is checked against.
 */
export type PushWire =
  | { protocol: 'tcp' }
  | { protocol: 'tls/http/1.1'; ca: string }
  | { protocol: 'tls/h2'; ca: string; streamsPerSession: number };

/** What one opened connection ran on: `tcp`, or `tls/` and the protocol ALPN chose. */
export type NegotiatedProtocol = 'tcp' | `tls/${string}`;

export interface ConnectCommand {
  type: 'connect';
  transport: PushTransport;
  port: number;
  /** Several hub replicas: connection i goes to ports[i % ports.length] (default: [port]). */
  ports?: number[];
  /** Default: the raw `net` socket (`tcp`). */
  wire?: PushWire;
  /** Request paths; connection i uses paths[i % paths.length]. */
  paths: string[];
  /** Header lines added to every request (`Name: value\r\n` each; raw `tcp` wire only). */
  extraHeaders?: string;
  count: number;
  /** The index of this client's first connection among all clients' (several client processes). */
  firstIndex?: number;
  /** Connections started per tick, and the tick interval. */
  batchSize: number;
  batchIntervalMs: number;
  /** At most this many started but not yet answered (keeps the server's accept backlog from overflowing). */
  maxPending: number;
  timeoutMs: number;
}

/** Answer with the arrivals of the event stamped `stamp` once `expected` arrived or after `timeoutMs`. */
export interface AwaitCommand {
  type: 'await';
  stamp: number;
  expected: number;
  /** Every connection gets the event: answer as soon as every still open connection got it. */
  toEveryOpen: boolean;
  timeoutMs: number;
}

export interface CloseCommand {
  type: 'close';
}

export type ClientCommand = ConnectCommand | AwaitCommand | CloseCommand;

export interface ConnectedReport {
  type: 'connected';
  connected: number;
  failed: number;
  /** Connect attempts that failed and were made again. */
  retried: number;
  /** From the first connect to the last first byte. */
  ms: number;
  firstError: string | undefined;
  /** Opened connections by what they ran on (a TLS row that fell back to HTTP/1.1 shows here). */
  protocols: Partial<Record<NegotiatedProtocol, number>>;
}

export interface ArrivalsReport {
  type: 'arrivals';
  stamp: number;
  /** Arrival − publish time of every delivery of that event, in ms, in arrival order. */
  latenciesMs: number[];
  /** Connections still open. */
  open: number;
  /** Deliveries of events already reported on (duplicates or unexpected receivers), so far. */
  extra: number;
}

export interface ClosedReport {
  type: 'closed';
}

export type ClientReport = ConnectedReport | ArrivalsReport | ClosedReport;
