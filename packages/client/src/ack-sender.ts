/**
 * Tells the gateway an ack session's position: `POST /_gw/v1/ack` with the JWT, batched (one
 * request for many events handled), one at a time, and only when the position moved since the
 * gateway last took one. A send that fails is tried again later: the gateway redelivers what it
 * does not know handled, so a lost ack costs a copy the client drops, never an event.
 */
import type { AckPosition } from './ack-position.ts';
import { retryAfterMs } from './transports/transport.ts';

export class AckSender {
  /** The gateway's ACK_TIMEOUT, from the welcome. */
  timeoutMs = 30_000;
  private readonly url: string;
  private readonly session: string;
  private readonly acks: AckPosition;
  private readonly token: () => string | undefined;
  /** The gateway refused the acknowledgement for good (400, 409: a session over its subject's bound, a position of an old epoch). */
  private readonly refused: (status: number, message: string) => void;
  /** The last position the gateway took (or refused for good). */
  private taken: string | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private due = 0;
  private turn: Promise<void> = Promise.resolve();
  /** The client closed: the last send is made, nothing is tried again after it. */
  private over = false;

  constructor(
    url: string,
    session: string,
    acks: AckPosition,
    token: () => string | undefined,
    refused: (status: number, message: string) => void,
  ) {
    this.url = url;
    this.session = session;
    this.acks = acks;
    this.token = token;
    this.refused = refused;
  }

  /** Sends within `ms`, or sooner when a send is due sooner already. */
  within(ms: number): void {
    if (this.over) return;
    const due = Date.now() + ms;
    if (this.timer !== undefined && this.due <= due) return;
    clearTimeout(this.timer);
    this.due = due;
    this.timer = setTimeout(() => void this.send(), ms);
  }

  /**
   * Sends now, after a send under way; `keepalive` (the page goes) at once, with it: the page has no
   * later turn, and its send under way dies with it. The gateway only moves a position forward, so
   * two sends that cross lose nothing. Never rejects.
   */
  send(keepalive = false): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (keepalive) return this.post(true);
    this.turn = this.turn.then(() => this.post(false));
    return this.turn;
  }

  /** The client closed: sends what is left, once. */
  last(): Promise<void> {
    // A retry of this send comes after `over`, so none is made.
    const sent = this.send();
    this.over = true;
    return sent;
  }

  private async post(keepalive: boolean): Promise<void> {
    const position = this.acks.position;
    if (position === undefined || position === this.taken) return;
    // A CORS-safelisted request: the JWT in the body, which goes as text/plain, no header of ours. A
    // request that needs a preflight is dropped with a page that closes before its preflight is
    // answered (Chromium), and the keepalive ack is sent as the page closes.
    const res = await fetch(this.url, {
      method: 'POST',
      body: JSON.stringify({ session: this.session, position, token: this.token() }),
      keepalive,
    }).catch(() => undefined);
    const status = res?.status ?? 0;
    const text = await res?.text().catch(() => '');
    // The network, an expired JWT, the rate limit, the gateway's outage: later. Other refusals would
    // come again: given up, and told.
    if (status === 0 || status === 401 || status === 429 || status > 499)
      this.within(retryAfterMs(res?.headers.get('retry-after') ?? null) ?? this.timeoutMs / 3);
    else {
      this.taken = position;
      if (status > 299) this.refused(status, text ?? '');
    }
  }
}
