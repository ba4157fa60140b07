/**
 * The client: one logical connection to the gateway over the best transport that works, kept open
 * across cuts, drains and token expiry, resuming from the last stream position so every event comes
 * once and in order.
 */
import { type AckEntry, type AckLimits, AckPosition } from './ack-position.ts';
import { AckSender } from './ack-sender.ts';
import { Backoff, type BackoffOptions } from './backoff.ts';
import { bearer } from './connect-url.ts';
import { Dedupe } from './dedupe.ts';
import { Emitter } from './emitter.ts';
import { GatehouseError } from './gatehouse-error.ts';
import { jwtExpired, jwtExpiresAt } from './jwt-expiry.ts';
import { SubscriptionError } from './subscription-error.ts';
import { longpollTransport } from './transports/longpoll.ts';
import { sseTransport } from './transports/sse.ts';
import type {
  DropCode,
  OpenConnection,
  Transport,
  TransportEnd,
  TransportName,
} from './transports/transport.ts';
import { websocketTransport } from './transports/websocket.ts';
import { matchesType } from './type-pattern.ts';
import type {
  CloudEvent,
  EventTypes,
  HistoryOptions,
  HistoryPage,
  Presence,
  PresenceChange,
  Subscription,
  TypedCloudEvent,
} from './types.ts';

export interface GatehouseOptions {
  /** A JWT, or a function that gives one: called at the first connect and when the JWT expired or was refused. */
  token?: string | (() => string | Promise<string>);
  /** Transports in order of preference (default: websocket, sse, longpolling). */
  transports?: TransportName[];
  /** Subscriptions of the first connect (`subscribe` changes them later). */
  subscriptions?: Subscription[];
  /** Resume after this stream position at the first connect. */
  lastEventId?: string;
  /** The same as `lastEventId`, by the name a subscription's start has (an event's or a history page's position). */
  since?: string;
  /**
   * The last this many events the subscriptions match come first, then live, with no gap and no
   * duplicate (the gateway takes it down to HISTORY_MAX_LIMIT). Only while the client has no
   * position: a reconnect resumes from the last event it had.
   */
  rewind?: number;
  /**
   * The newest event of each place the subscriptions name (of the types the gateway keeps,
   * LATEST_EVENT_TYPES) comes first, then live: the current state without asking a backend. Only
   * while the client has no position. Every transport.
   */
  latest?: boolean;
  /** Delays between reconnects: full jitter, doubling from `initialMs` (500) up to `maxMs` (30 s). */
  backoff?: BackoffOptions;
  /** A transport that gives no answer within this time counts as one that cannot open (10 s). */
  openTimeoutMs?: number;
  /** On a fallback transport, how long before the preferred one is tried again (5 min). */
  retryPreferredAfterMs?: number;
  /**
   * SSE and long-polling: a connection that receives nothing for this long is dropped and made
   * again (45 s: three of the gateway's 15 s heartbeats; keep it above HEARTBEAT_INTERVAL and
   * LONGPOLL_TIMEOUT).
   */
  idleTimeoutMs?: number;
  /** How many recent event ids are remembered to drop duplicates (1000). */
  dedupeWindow?: number;
  /** Acknowledged, at-least-once delivery (docs/client.md "Acknowledged delivery"); needs `token`. */
  ack?: AckOptions;
}

export interface AckOptions extends AckLimits {
  /** The ack session: a durable cursor of the JWT's subject, 1 to 64 of `A-Z a-z 0-9 . _ ~ -`. */
  session: string;
  /** The event types or type patterns the application acknowledges (all when absent); the others count as handled once delivered. */
  types?: string[];
  /** Handled only when the application calls `ack(event)`, not once the listeners returned. */
  manual?: boolean;
}

/**
 * Why a connection is being made again or is over, to branch on (`reason` is for people):
 * - a connection dropped or could not open (reconnecting): `network` (the platform's error is the
 *   `cause`), `idle`, `open_timeout`, `ended` (by the server, without a reason), `server_restart`;
 * - `refused`: the gateway answered the connect with an error `status` (reconnecting for 429 and
 *   503, closed for 400, 401 and 403 without a new token);
 * - `session_expired`: the JWT ended, or the connect hook's expireAt (reconnecting, with a new JWT
 *   when it has expired; closed for a fixed JWT that has);
 * - `disconnected_by_gateway`: an operator ended the connection (reconnecting when told to);
 * - closed only: `session_killed`, `closed_by_client`, `token_failed` (the token function threw:
 *   its error is the `cause`).
 */
export type ConnectionCode =
  | DropCode
  | 'refused'
  | 'session_expired'
  | 'disconnected_by_gateway'
  | 'session_killed'
  | 'closed_by_client'
  | 'token_failed';

/** Why: its code, in words, the refusal's HTTP status (a WebSocket's 4000+status close as the status), the error behind it. */
interface Why {
  code: ConnectionCode;
  reason: string;
  status?: number;
  cause?: unknown;
}

export type ConnectionState =
  | { state: 'connecting' }
  | { state: 'connected'; transport: TransportName }
  | ({ state: 'reconnecting'; delayMs: number } & Why)
  | ({ state: 'closed' } & Why);

/**
 * Why the gateway could not replay what the client missed (`gw.resync_required`):
 * - `epoch-changed`: the event stream was created anew since the client's position (its history differs);
 * - `retention-gap`: the events after it are no longer held;
 * - `unknown-position`: the stream never had that position.
 * A gateway from before reasons sends none: `retention-gap` then. Other values may come later.
 */
export type ResyncReason = 'epoch-changed' | 'retention-gap' | 'unknown-position' | (string & {});

export interface Resync {
  reason: ResyncReason;
  /** The position the client could not resume from. */
  lastEventId: string;
}

export type GatehouseEvents<Types extends EventTypes = EventTypes> = {
  event: [TypedCloudEvent<Types>];
  state: [ConnectionState];
  /** The gateway could not replay what was missed, and says why: reload the state derived from events. */
  resync: [Resync];
  /** A member joined or left a place this client subscribes to `gw.presence.joined` / `gw.presence.left` of. */
  presence: [PresenceChange];
  /** The gateway changed this connection's subscriptions (an operator, server-side): the list now in force. */
  subscriptions: [readonly Subscription[]];
  /**
   * The gateway's connect hook (CONNECT_CHECK) gave this connection `data`: sent at every connect
   * that has some (a reconnect may bring new data), before the connection's first event.
   */
  welcome: [unknown];
  /** Something failed that the client went on past (GatehouseError's `code` says what). */
  error: [GatehouseError];
};

const transportsByName: Record<TransportName, Transport> = {
  websocket: websocketTransport,
  sse: sseTransport,
  longpolling: longpollTransport,
};

/**
 * The gateway's own events (welcome, kill, expiry, resync) are handled here, not handed on. They
 * are told by the transport's mark (transport.ts, `gatewayEvent`), which only the gateway sets; a
 * stream event that merely names itself so (`gw.…`, source `gatehouse`) is dropped: producers may
 * not publish those and the gateway drops them, so one that arrives is forged.
 */
const GATEWAY_SOURCE = 'gatehouse';

const sessionKilled: Why = { code: 'session_killed', reason: 'session killed' };
const sessionExpired: Why = { code: 'session_expired', reason: 'session expired' };

function looksLikeGatewayEvent(event: CloudEvent): boolean {
  const type = String(event.type).trim().toLowerCase();
  return type.startsWith('gw.') || String(event.source).trim().toLowerCase() === GATEWAY_SOURCE;
}

/**
 * The gateway's URL as an absolute http(s) URL: a relative one resolves against the page's, where
 * there is a page. A mistake here would otherwise surface as a connect that fails for ever.
 */
function gatewayUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url, (globalThis as { location?: { href?: string } }).location?.href);
  } catch {
    throw new TypeError(
      `Gatehouse: '${url}' is not an absolute URL, and there is no page to resolve it against`,
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new TypeError(`Gatehouse: the gateway's URL must be http or https, not '${parsed.protocol}'`);
  return parsed.href;
}

/** The page's window, whose `online` and `offline` events say when the network comes and goes (none in Node). */
function browserWindow(): Pick<EventTarget, 'addEventListener' | 'removeEventListener'> | undefined {
  const w = globalThis as {
    addEventListener?: unknown;
    removeEventListener?: unknown;
    navigator?: { onLine?: unknown };
  };
  return typeof w.addEventListener === 'function' && typeof w.navigator?.onLine === 'boolean'
    ? (w as unknown as EventTarget)
    : undefined;
}

/** The transports by name, refusing a name that is none (plain JavaScript has no type to stop it). */
function transportsOf(names: readonly TransportName[]): Transport[] {
  if (names.length === 0) throw new TypeError('Gatehouse: at least one transport is needed');
  return names.map((name) => {
    const transport = Object.hasOwn(transportsByName, name) ? transportsByName[name] : undefined;
    if (!transport)
      throw new TypeError(
        `Gatehouse: unknown transport '${String(name)}' (known: ${Object.keys(transportsByName).join(', ')})`,
      );
    return transport;
  });
}

export class Gatehouse<Types extends EventTypes = EventTypes> extends Emitter<GatehouseEvents<Types>> {
  private readonly base: string;
  private readonly options: GatehouseOptions;
  private readonly transports: Transport[];
  private readonly backoff: Backoff;
  private readonly dedupe: Dedupe;
  private current: ConnectionState = { state: 'connecting' };
  /** Index of the transport in use, or the one that worked last (remembered for the session). */
  private index = 0;
  /** Transports that failed to open in a row. */
  private failedOpens = 0;
  private connection: OpenConnection | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private preferredTimer: ReturnType<typeof setTimeout> | undefined;
  /** Renews the open connection's JWT before it expires (renewInPlace). */
  private renewTimer: ReturnType<typeof setTimeout> | undefined;
  private position: string | undefined;
  private token: string | undefined;
  /** The open connection's token (for subscription changes). */
  private connectionToken: string | undefined;
  /** The last connection's token: a reconnect shows it, so the rate limit counts it as one. */
  private previousConnectionToken: string | undefined;
  private subscriptionList: Subscription[] | undefined;
  private subscriptionChanges: Promise<void> = Promise.resolve();
  private killed = false;
  /** Set when an operator ended the connection and told the client to come back: the reason. */
  private reconnectAtOnce: string | undefined;
  /** A refusal was answered with a new token and no connection was admitted since. */
  private retriedWithNewToken = false;
  private tokenWaiters: Array<() => void> = [];
  /** The connection's welcome `gw.subscriptions_set` is still to come (a later one is a change). */
  private welcomePending = false;
  /** This client's own changes the gateway took and has not echoed yet (each gets a `gw.subscriptions_set`). */
  private ownEchoes = 0;
  /** The `data` of the last welcome event (the connect hook's), if it had any. */
  private welcome: unknown;
  /** With `ack`: what is handled, and its sender. */
  private readonly acks: AckPosition | undefined;
  private readonly acker: AckSender | undefined;

  constructor(url: string, options: GatehouseOptions = {}) {
    super();
    this.base = gatewayUrl(url);
    this.options = options;
    this.transports = transportsOf(options.transports ?? ['websocket', 'sse', 'longpolling']);
    this.backoff = new Backoff(options.backoff);
    this.dedupe = new Dedupe(options.dedupeWindow);
    this.position = options.lastEventId ?? options.since;
    this.subscriptionList = options.subscriptions;
    if (typeof options.token === 'string') this.token = options.token;
    if (options.ack) {
      if (!options.token) throw new TypeError('Gatehouse: ack needs a token');
      // 0 would give every event up as it comes, NaN would bound nothing.
      for (const limit of ['maxAttempts', 'maxPending'] as const)
        if (!((options.ack[limit] ?? 1) >= 1))
          throw new RangeError(`Gatehouse: ack.${limit} must be at least 1`);
      this.acks = new AckPosition((entry) => {
        this.report(
          new GatehouseError('event_given_up', `Gatehouse: gave up ${entry.keys[0]}`, {
            cause: entry.event,
          }),
        );
        this.handled(entry);
      }, options.ack);
      this.acker = new AckSender(
        `${new URL('/_gw/v1/ack', this.base)}`,
        options.ack.session,
        this.acks,
        () => this.token,
        (status, text) =>
          this.report(new GatehouseError('ack_refused', `Gatehouse: ack refused: ${status} ${text}`)),
      );
      browserWindow()?.addEventListener('pagehide', this.pagehide);
    }
    // Connect after the caller had the chance to add its listeners.
    this.timer = setTimeout(() => this.connect(), 0);
    browserWindow()?.addEventListener('online', this.online);
    browserWindow()?.addEventListener('offline', this.offline);
  }

  /**
   * The browser is back on a network: a client waiting out its backoff (which grew while every
   * attempt failed offline) tries at once.
   */
  private readonly online = (): void => {
    if (this.current.state !== 'reconnecting') return;
    clearTimeout(this.timer);
    this.backoff.reset();
    void this.connect();
  };

  /** The browser lost its network: the connection is gone, though it may take long to say so. */
  private readonly offline = (): void => {
    if (this.current.state !== 'connected') return;
    this.forgetConnection()?.close();
    this.retry({ code: 'network', reason: 'the browser is offline' }, this.backoff.next());
  };

  /** The page goes away (closed, navigated, frozen in the back-forward cache): the position goes with it. */
  private readonly pagehide = (): void => void this.acker?.send(true);

  /** The connection is over: it and what hung on it (its token, the renewal, the preferred retry) go. */
  private forgetConnection(): OpenConnection | undefined {
    const connection = this.connection;
    this.connection = undefined;
    this.connectionToken = undefined;
    clearTimeout(this.preferredTimer);
    clearTimeout(this.renewTimer);
    return connection;
  }

  /** A listener threw: an `error` event, or the console when nobody listens for those (or it threw). */
  protected override failed(name: keyof GatehouseEvents<Types>, err: unknown): void {
    const error = new GatehouseError('listener_failed', `Gatehouse: a listener of '${name}' threw`, {
      cause: err,
    });
    if (name === 'error') console.error(error);
    else this.report(error);
  }

  /** An `error` event, or the console when nobody listens for those. */
  private report(error: GatehouseError): void {
    if (this.listens('error')) this.emit('error', error);
    else console.error(error);
  }

  get state(): ConnectionState {
    return this.current;
  }

  /** The transport of the open connection, if one is open. */
  get transport(): TransportName | undefined {
    return this.current.state === 'connected' ? this.current.transport : undefined;
  }

  /**
   * What the gateway's connect hook (CONNECT_CHECK) gave the last connection made, as its welcome
   * event carried it; undefined when it gave nothing (or there is no hook).
   */
  get welcomeData(): unknown {
    return this.welcome;
  }

  /** The last stream position received: what a reconnect resumes after. */
  get lastEventId(): string | undefined {
    return this.position;
  }

  /** The subscriptions in force (or set again on the next connection): the last change the gateway took. */
  get subscriptions(): readonly Subscription[] {
    return this.subscriptionList ?? [];
  }

  /**
   * Replaces the subscriptions. Resolves once the gateway applied them; rejects with the server's
   * message when it refused them (the previous ones stay). Kept and set again on every new connection.
   */
  subscribe(subscriptions: Subscription[]): Promise<void> {
    return this.changeSubscriptions(() => subscriptions);
  }

  /** Adds subscriptions to those in force: as `subscribe`, for the list with these at its end. */
  addSubscriptions(...subscriptions: Subscription[]): Promise<void> {
    return this.changeSubscriptions((current) => [...current, ...subscriptions]);
  }

  /** Removes every subscription to these event types: as `subscribe`, for the list without them. */
  removeSubscriptions(...eventTypes: string[]): Promise<void> {
    return this.changeSubscriptions((current) => current.filter((s) => !eventTypes.includes(s.eventType)));
  }

  /**
   * Changes apply one after another, each to the list the one before left, so changes made at once
   * all hold (two adds not awaited keep both); a refused one changes nothing and the next goes on.
   */
  private changeSubscriptions(next: (current: readonly Subscription[]) => Subscription[]): Promise<void> {
    return this.inTurn(() => this.putSubscriptions(next(this.subscriptions)));
  }

  /** Runs a subscription change after those before it (a failed one does not stop the next). */
  private inTurn(change: () => Promise<void>): Promise<void> {
    const run = this.subscriptionChanges.then(change);
    this.subscriptionChanges = run.catch(() => {});
    return run;
  }

  /**
   * Before the open connection's JWT expires, a new one from the token function goes to the gateway
   * with the subscriptions in force (the change that also moves the connection's end to the new
   * JWT's): the session goes on without a reconnect (WebSocket and SSE; long-polling renews at the
   * reconnect its poll token's end makes). At three quarters of the JWT's time left, so a
   * slow token function or gateway still has a quarter; should it fail, the gateway ends the
   * connection at the old JWT's end and the client reconnects with a fresh one as before.
   */
  private scheduleRenewal(): void {
    clearTimeout(this.renewTimer);
    if (typeof this.options.token !== 'function' || this.token === undefined) return;
    if (!this.transports[this.index]!.renewsInPlace) return;
    const expiresAt = jwtExpiresAt(this.token);
    if (expiresAt === undefined) return;
    this.renewTimer = setTimeout(
      () => void this.renewInPlace(),
      Math.max(0, (expiresAt - Date.now()) * 0.75),
    );
  }

  private async renewInPlace(): Promise<void> {
    const connectionToken = this.connectionToken;
    if (connectionToken === undefined || !(await this.refreshToken())) return;
    const list = this.subscriptionList;
    await this.inTurn(() => this.putSubscriptions(list ?? [], { keep: list === undefined })).then(
      () => {
        if (this.connectionToken === connectionToken) this.scheduleRenewal();
      },
      () => {},
    );
  }

  private async putSubscriptions(
    subscriptions: Subscription[],
    options: { keep?: boolean } = {},
  ): Promise<void> {
    let tried: string | undefined;
    for (;;) {
      const connectionToken = await this.nextConnectionToken(tried);
      tried = connectionToken;
      const transport = this.transports[this.index]!;
      const url = new URL(
        `/_gw/v1/connection/${transport.subscriptionsPath}/${encodeURIComponent(connectionToken)}/subscriptions`,
        this.base,
      );
      this.ownEchoes++;
      const res = await fetch(url, {
        method: 'PUT',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...bearer(this.token),
        },
        body: JSON.stringify({ subscriptions }),
      }).catch(() => undefined);
      if (res?.status !== 204) this.ownEchoes = Math.max(0, this.ownEchoes - 1);
      // Gone with its connection (cut meanwhile): set them on the next one.
      if (res === undefined || res.status === 410) continue;
      if (res.status === 204) {
        if (!options.keep) this.subscriptionList = subscriptions;
        return;
      }
      throw new SubscriptionError(res.status, await res.text().catch(() => ''));
    }
  }

  /**
   * Who is present in a place, cluster-wide: the connections subscribed to `eventType` (in the place
   * `where`, one of the constraint objects clients subscribe with), counted, and their members.
   * Allowed as subscribing there would be; rejects with a SubscriptionError carrying the gateway's
   * status and text otherwise (403), or for a bad place (400).
   */
  presence(eventType: string, where?: Record<string, unknown>): Promise<Presence> {
    return this.query('presence', { eventType, where });
  }

  /**
   * The newest events of `eventType` (in the place `where`) this client's subscription to it would
   * have been sent, newest first, at most `limit`; `before` (a page's `next`, an event's position)
   * pages back. Allowed as subscribing there would be; rejects with a SubscriptionError carrying the
   * gateway's status and text otherwise (403), or for bad parameters (400).
   */
  history(eventType: string, options: HistoryOptions = {}): Promise<HistoryPage> {
    return this.query('history', { eventType, ...options });
  }

  /** A GET of the gateway's `/_gw/v1/<path>` with this client's token; `where` as JSON. */
  private async query<T>(path: string, params: Record<string, unknown>): Promise<T> {
    const url = new URL(`/_gw/v1/${path}`, this.base);
    for (const [k, v] of Object.entries(params))
      if (v !== undefined) url.searchParams.set(k, k === 'where' ? JSON.stringify(v) : String(v));
    if (this.token === undefined && typeof this.options.token === 'function') await this.refreshToken();
    const res = await fetch(url, {
      headers: bearer(this.token),
    });
    if (res.status !== 200) throw new SubscriptionError(res.status, await res.text().catch(() => ''));
    return (await res.json()) as T;
  }

  /**
   * Manual acknowledgement (`ack.manual`): the application handled this event. An event it does not
   * acknowledge comes again after the gateway's ACK_TIMEOUT.
   */
  ack(event: CloudEvent): void {
    const entry = this.acks?.entry(keyOf(event));
    if (entry) this.handled(entry);
  }

  /** Ends the client: no more events, no reconnect. With `ack`, resolves once the gateway was told the position (or could not be). */
  close(): Promise<void> {
    this.finish({ code: 'closed_by_client', reason: 'closed by the client' });
    return this.acker?.last() ?? Promise.resolve();
  }

  /** The connection token of a connection other than `not`, once there is one. */
  private nextConnectionToken(not: string | undefined): Promise<string> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        if (this.current.state === 'closed') reject(new Error(`Gatehouse: ${this.current.reason}`));
        else if (this.connectionToken !== undefined && this.connectionToken !== not)
          resolve(this.connectionToken);
        else return false;
        return true;
      };
      const waiter = () => {
        if (!check()) this.tokenWaiters.push(waiter);
      };
      if (!check()) this.tokenWaiters.push(waiter);
    });
  }

  private wakeTokenWaiters(): void {
    const waiters = this.tokenWaiters;
    this.tokenWaiters = [];
    for (const w of waiters) w();
  }

  /**
   * Opens a connection over the transport in use. A `probe` opens the preferred transport beside the
   * fallback connection that goes on delivering: it takes over only once the gateway answered on it
   * (the fallback is closed then, and what both carried meanwhile is dropped as a duplicate), and a
   * probe that cannot open is closed with nothing else changed, to be tried again later.
   */
  private async connect(probe = false): Promise<void> {
    if (this.current.state === 'closed') return;
    const renew = this.token === undefined || jwtExpired(this.token);
    if (renew && typeof this.options.token === 'function' && !(await this.refreshToken())) return;
    const transport = this.transports[probe ? 0 : this.index]!;
    let opened = false;
    let connection: OpenConnection | undefined;
    if (this.current.state === 'connecting') this.setState(this.current);
    const open = () => {
      if (opened) return;
      opened = true;
      clearTimeout(openTimer);
      if (probe) this.changeOver(connection!);
      this.opened(transport);
    };
    const ended = (end: TransportEnd) => {
      clearTimeout(openTimer);
      if (probe && !opened) {
        connection?.close();
        return this.retryPreferredLater();
      }
      if (connection) void this.ended(connection, transport, opened, end);
    };
    // Open means the gateway spoke: its welcome comes first on every connection, so a proxy that
    // buffers a stream (headers through, events held) counts as one that cannot open.
    const openTimer = setTimeout(() => {
      connection?.close();
      ended({ kind: 'dropped', code: 'open_timeout', reason: `${transport.name} did not open` });
    }, this.options.openTimeoutMs ?? 10_000);
    try {
      connection = transport.open(
        {
          base: this.base,
          token: this.token,
          subscriptions: this.subscriptionList,
          lastEventId: this.position,
          rewind: this.options.rewind,
          latest: this.options.latest,
          connectionToken: this.previousConnectionToken,
          ackSession: this.options.ack?.session,
          idleTimeoutMs: this.options.idleTimeoutMs ?? 45_000,
        },
        {
          opened: open,
          event: (event, position) => {
            open();
            this.received(event, position);
          },
          gatewayEvent: (event, position) => {
            open();
            if (position !== undefined) this.position = position;
            this.gatewayEvent(event);
          },
          position: (position) => {
            this.position = position;
            // A long-poll answer's: its events, which carry none, are handled up to it once they are.
            this.reached(position);
          },
          end: ended,
        },
      );
    } catch (err) {
      // A URL the platform will not open (a WebSocket to a blocked port throws at once).
      clearTimeout(openTimer);
      if (probe) return this.retryPreferredLater();
      return this.cannotOpen(transport, {
        code: 'network',
        reason: String((err as Error)?.message ?? err),
        cause: err,
      });
    }
    if (!probe) this.connection = connection;
  }

  /** The probe answered: it becomes the connection, and the fallback it replaces is closed. */
  private changeOver(probe: OpenConnection): void {
    const fallback = this.connection;
    this.connection = probe;
    this.connectionToken = undefined;
    this.index = 0;
    fallback?.close();
  }

  private opened(transport: Transport): void {
    this.failedOpens = 0;
    this.backoff.reset();
    if (this.current.state !== 'connected' || this.current.transport !== transport.name)
      this.setState({ state: 'connected', transport: transport.name });
    clearTimeout(this.preferredTimer);
    if (this.index > 0) this.retryPreferredLater();
  }

  /** On a fallback: try the preferred transport again later, beside the connection in use. */
  private retryPreferredLater(): void {
    clearTimeout(this.preferredTimer);
    if (this.current.state === 'closed' || this.index === 0) return;
    this.preferredTimer = setTimeout(
      () => void this.connect(true),
      this.options.retryPreferredAfterMs ?? 300_000,
    );
  }

  private received(event: CloudEvent, position: string | undefined): void {
    if (position !== undefined) this.position = position;
    const forged = looksLikeGatewayEvent(event);
    const types = this.options.ack?.types;
    if (this.acks && !forged && (types?.some((t) => matchesType(t, event.type)) ?? true))
      this.handOn(this.acks, event, position);
    else {
      if (!forged && this.dedupe.first(keyOf(event))) this.emit('event', event as TypedCloudEvent<Types>);
      if (position !== undefined) this.reached(position);
    }
  }

  /**
   * An event the application acknowledges: handed on unless a copy of one handled or being handled;
   * handled once every listener returned and their promises resolved (or at `ack(event)`), failed
   * when one threw or rejected.
   */
  private handOn(acks: AckPosition, event: CloudEvent, position: string | undefined): void {
    const keys = position === undefined ? [keyOf(event)] : [keyOf(event), position];
    const entry = acks.arrived(keys, position, this.dedupe.first(keyOf(event)), event);
    if (!entry) return;
    const results = this.emit('event', event as TypedCloudEvent<Types>);
    if (!results) acks.failed(entry);
    else if (!this.options.ack!.manual)
      Promise.all(results).then(
        () => this.handled(entry),
        (err: unknown) => {
          this.failed('event', err);
          acks.failed(entry);
        },
      );
  }

  /** Nothing to handle up to `position`: acknowledged in a later batch, at the latest before ACK_TIMEOUT. */
  private reached(position: string): void {
    if (this.acks?.reached(position)) this.acker!.within(this.acker!.timeoutMs / 3);
  }

  /**
   * Handled: acknowledged within a second. A batch a second (60 a minute, a tenth of the gateway's
   * default ACK_REQUESTS_PER_MINUTE) keeps each ack's cost off the gateway; close() and pagehide
   * send at once, so a closing tab loses nothing to the wait.
   */
  private handled(entry: AckEntry): void {
    if (this.acks!.handled(entry)) this.acker!.within(Math.min(1000, this.acker!.timeoutMs / 3));
  }

  private gatewayEvent(event: CloudEvent): void {
    const data = event.data as { connection_token?: string; data?: unknown } | undefined;
    if (event.type === 'gw.connection.create' && data?.connection_token) {
      this.welcomePending = true;
      this.ownEchoes = 0;
      this.retriedWithNewToken = false;
      this.connectionToken = data.connection_token;
      this.previousConnectionToken = data.connection_token;
      this.welcome = data.data;
      const timeoutMs = (data as { ack?: { timeoutMs?: unknown } }).ack?.timeoutMs;
      if (this.acker && typeof timeoutMs === 'number' && timeoutMs > 0) this.acker.timeoutMs = timeoutMs;
      this.wakeTokenWaiters();
      this.scheduleRenewal();
      if (data.data !== undefined) this.emit('welcome', data.data);
    } else if (event.type === 'gw.resync_required') this.emit('resync', resyncOf(event.data));
    else if (event.type === 'gw.session_killed') {
      this.killed = true;
      this.finish(sessionKilled);
    } else if (event.type === 'gw.connection_closed') this.closedByOperator(event.data);
    else if (event.type === 'gw.subscriptions_set') this.subscriptionsSet(event.data);
    else if (event.type === 'gw.presence.joined' || event.type === 'gw.presence.left')
      this.emit('presence', {
        kind: event.type === 'gw.presence.joined' ? 'joined' : 'left',
        ...(event.data as Omit<PresenceChange, 'kind'>),
      });
  }

  /**
   * After the connection's welcome and the echoes of this client's own changes, a
   * `gw.subscriptions_set` is a change an operator made (server-side subscriptions): the list in
   * force becomes it, so the next connection asks for it and not for what the operator replaced.
   */
  private subscriptionsSet(list: unknown): void {
    if (this.welcomePending) {
      this.welcomePending = false;
      return;
    }
    if (this.ownEchoes > 0) {
      this.ownEchoes--;
      return;
    }
    if (!Array.isArray(list)) return;
    this.subscriptionList = list as Subscription[];
    this.emit('subscriptions', this.subscriptionList);
  }

  /**
   * An operator ended this connection (the gateway's connections API), with a reason and advice:
   * told not to come back, the client closes for good; told to reconnect, it does at once when the
   * transport ends.
   */
  private closedByOperator(data: unknown): void {
    const { reason, reconnect } = (data ?? {}) as { reason?: unknown; reconnect?: unknown };
    const why = `disconnected by the gateway${typeof reason === 'string' && reason !== '' ? `: ${reason}` : ''}`;
    if (reconnect === true) this.reconnectAtOnce = why;
    else this.finish({ code: 'disconnected_by_gateway', reason: why });
  }

  private async ended(
    connection: OpenConnection,
    transport: Transport,
    opened: boolean,
    end: TransportEnd,
  ): Promise<void> {
    if (this.connection !== connection || this.current.state === 'closed') return;
    this.forgetConnection();
    if (this.killed) return this.finish(sessionKilled);
    if (this.reconnectAtOnce !== undefined) {
      const why = this.reconnectAtOnce;
      this.reconnectAtOnce = undefined;
      return this.retry({ code: 'disconnected_by_gateway', reason: why }, 0);
    }
    if (end.kind === 'expired') {
      // The JWT ended the connection: a fresh one, and straight back. A client without a JWT only
      // needs a new connection; one with a fixed JWT cannot go on, unless the JWT is still good
      // and it was the gateway's connect hook that set the end (its expireAt): then straight back,
      // and the hook is asked again.
      const fixed = this.options.token;
      if (typeof fixed === 'string' && jwtExpired(fixed)) return this.finish(sessionExpired);
      if (await this.refreshToken()) this.retry(sessionExpired, 0);
      return;
    }
    if (end.kind === 'refused') return this.refused(end);
    const why = { code: end.code, reason: end.reason, ...(end.cause !== undefined && { cause: end.cause }) };
    if (!opened) return this.cannotOpen(transport, why);
    const delay = end.soon ? this.backoff.soon() : this.delay(end.retryMs);
    this.retry(why, delay);
  }

  /** 400/401/403 will not change by trying again, unless a new token helps; the rest passes. */
  private async refused(end: { status: number; message: string; retryMs?: number }): Promise<void> {
    const why: Why = {
      code: 'refused',
      reason: `refused: ${end.status} ${end.message}`.trim(),
      status: end.status,
    };
    if (end.status === 400 || end.status === 401 || end.status === 403) {
      // One new token per refusal: a token function whose every token is refused must not keep
      // the client knocking for ever.
      if (typeof this.options.token !== 'function' || this.retriedWithNewToken) return this.finish(why);
      const before = this.token;
      if (!(await this.refreshToken())) return;
      if (this.token === before) return this.finish(why);
      this.retriedWithNewToken = true;
    }
    this.retry(why, this.delay(end.retryMs));
  }

  /** Fall back to the next transport at once; once every one failed, wait before the next round. */
  private cannotOpen(transport: Transport, why: Why): void {
    this.failedOpens++;
    this.index = (this.index + 1) % this.transports.length;
    const roundOver = this.failedOpens % this.transports.length === 0;
    this.retry({ ...why, reason: `${transport.name}: ${why.reason}` }, roundOver ? this.backoff.next() : 0);
  }

  /** The server's hint when it gave one, the backoff's next delay otherwise. */
  private delay(hintMs: number | undefined): number {
    return hintMs === undefined ? this.backoff.next() : this.backoff.hinted(hintMs);
  }

  private retry(why: Why, delayMs: number): void {
    if (this.current.state === 'closed') return;
    this.setState({ state: 'reconnecting', ...why, delayMs });
    this.timer = setTimeout(() => void this.connect(), delayMs);
  }

  /** Asks the token function; false (and the client closed) when it failed. */
  private async refreshToken(): Promise<boolean> {
    const get = this.options.token;
    if (typeof get !== 'function') return true;
    try {
      this.token = await get();
      return this.current.state !== 'closed';
    } catch (err) {
      this.finish({
        code: 'token_failed',
        reason: `the token function failed: ${(err as Error)?.message ?? err}`,
        cause: err,
      });
      return false;
    }
  }

  private finish(why: Why): void {
    if (this.current.state === 'closed') return;
    browserWindow()?.removeEventListener('online', this.online);
    browserWindow()?.removeEventListener('offline', this.offline);
    browserWindow()?.removeEventListener('pagehide', this.pagehide);
    clearTimeout(this.timer);
    clearTimeout(this.preferredTimer);
    clearTimeout(this.renewTimer);
    const connection = this.connection;
    this.connection = undefined;
    connection?.close();
    this.setState({ state: 'closed', ...why });
    this.wakeTokenWaiters();
  }

  private setState(state: ConnectionState): void {
    this.current = state;
    this.emit('state', state);
  }
}

/** An event's identity for dedupe: its source and id. */
function keyOf(event: CloudEvent): string {
  return `${event.source}\n${event.id}`;
}

/** What `gw.resync_required` says; a reason that is no code (a gateway from before codes: a sentence) reads as a retention gap. */
function resyncOf(data: unknown): Resync {
  const { reason, last_event_id: lastEventId } = (data ?? {}) as {
    reason?: unknown;
    last_event_id?: unknown;
  };
  return {
    reason: typeof reason === 'string' && /^[a-z]+(-[a-z]+)*$/.test(reason) ? reason : 'retention-gap',
    lastEventId: typeof lastEventId === 'string' ? lastEventId : '',
  };
}
