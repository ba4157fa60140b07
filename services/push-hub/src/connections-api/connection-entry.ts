/**
 * A connection as the connections API shows it (`GET /v3/connections`, `…/{id}`), whatever its
 * transport and whichever replica holds it. Times are ISO 8601 texts.
 */
import type { TransportKind } from '../connections/index.ts';
import type { Subscription } from '../subscriptions/index.ts';

export interface ConnectionEntry {
  id: string;
  transport: TransportKind;
  /** The replica holding it; for long-polling, the one that answered its latest poll. */
  replica: string;
  session?: string;
  user?: string;
  remoteAddress?: string;
  connectedAt: string;
  /** When the JWT it was admitted with expires: the connection ends then. */
  expiresAt?: string;
  subscriptions: Subscription[];
  /** Long-polling: when the replica last answered one of its polls. */
  lastPollAt?: string;
}

/** `GET /v3/connections/{id}`: the entry and what its transport has in hand now. */
export interface ConnectionDetail extends ConnectionEntry {
  /** Bytes written to it that have not gone out yet (not for long-polling). */
  bytesQueued?: number;
  /** Events written to it, gateway events included (not for long-polling). */
  eventsWritten?: number;
  /** Written at its own place rather than live: resuming, or reading slower than events come. */
  behind?: boolean;
}

export const isoTime = (ms: number): string => new Date(ms).toISOString();
