/**
 * The shape every Gatehouse service has, so that one host can run one service (its own main.ts) or
 * all of them (the embedded runner) without a service ever importing another.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** Answers the request and returns true, or returns false when the path is not this service's. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean;

export interface GatewayService {
  readonly name: string;
  /** Paths on the public edge (INBOUND_PORT). */
  readonly public?: RequestHandler;
  /** Paths on the internal API (API_PORT). */
  readonly internal?: RequestHandler;
  /** WebSocket upgrades on the public edge. */
  readonly upgrade?: UpgradeHandler;
  start?(): Promise<void>;
  /** Stops taking new work and drains what is in flight; called once on shutdown. */
  stop?(): Promise<void>;
}
