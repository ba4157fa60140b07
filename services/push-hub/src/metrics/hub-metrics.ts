/** The hub's Prometheus metrics (prefix gw_). */
import { readPublishedAt } from '@gatehouse/bus';
import {
  boundedLabel,
  type Counter,
  counter,
  type Gauge,
  gauge,
  type Histogram,
  histogram,
  type Registry,
} from '@gatehouse/service-kit';
import type { TransportKind } from '../connections/index.ts';
import type { ConnectKind } from '../limits/index.ts';
import { RateMeter } from './rate-meter.ts';
import { CounterTally, DELIVERY_BUCKETS } from './replica-counters.ts';

/**
 * Counts by one label's value, kept as plain numbers and added to `counter` when the registry is
 * read (its `collect`): an inc with labels hashes them, which costs more than a fan-out event no
 * connection here wants may cost in all (bench/src/unwanted-events.bench.ts), and a labelled child
 * (`labels()`) hashes them again on each inc. The connect path counts this way too: three
 * labelled incs per connect were a reconnect storm's label hashing (connect-burst.bench.ts). A
 * gauge takes its changes the same way (`add` with -1). Hub metrics that share a registry
 * (metricOnce) share the metric, each adding its own counts.
 */
class PendingCounts<L extends string> {
  private static readonly byCounter = new WeakMap<object, Set<PendingCounts<string>>>();
  /** A cell per value, so that a count is one Map look-up (an event kept unread pays two of these). */
  private readonly counts = new Map<string, { n: number }>();
  private readonly counter: Counter<L> | Gauge<L>;
  private readonly label: L;

  constructor(counter: Counter<L> | Gauge<L>, label: L) {
    this.counter = counter;
    this.label = label;
    let all = PendingCounts.byCounter.get(counter);
    if (!all) {
      all = new Set();
      PendingCounts.byCounter.set(counter, all);
    }
    all.add(this as PendingCounts<string>);
  }

  /** The `collect` of a counter whose counts are pending: adds every HubMetrics' counts to it. */
  static flushInto(counter: object): void {
    for (const pending of PendingCounts.byCounter.get(counter) ?? []) pending.flush();
  }

  add(value: string, n = 1): void {
    const count = this.counts.get(value);
    if (count !== undefined) count.n += n;
    else this.counts.set(value, { n });
  }

  private flush(): void {
    for (const [value, { n }] of this.counts)
      if (n !== 0) this.counter.inc({ [this.label]: value } as never, n);
    this.counts.clear();
  }
}

export class HubMetrics {
  private readonly connections: PendingCounts<'transport'>;
  private readonly connectionsTotal: PendingCounts<'transport'>;
  /** Read by the gauge at scrape time: a gauge's `set` per connect hashed its (empty) labels each time. */
  private subscriptionsHeld = 0;
  private readonly forwarded: Counter<'type'>;
  private readonly deliveries: Counter;
  private readonly dropped: Counter<'reason'>;
  private readonly fanoutEvents: PendingCounts<'outcome'>;
  private readonly forwardedCounts: PendingCounts<'type'>;
  private readonly rejected: Counter<'transport' | 'reason'>;
  private readonly kills: Counter;
  private readonly expired: Counter;
  private readonly resumes: Counter<'source'>;
  private readonly replayReaders: Gauge;
  private readonly routedTypes: Gauge;
  private readonly replayReadersOpened: Counter;
  private readonly replayedEvents: Counter;
  private readonly admitted: PendingCounts<'kind'>;
  private readonly drained: Counter;
  private readonly rescans: Counter;
  private readonly apiRequests: Counter<'operation' | 'answer'>;
  private readonly disconnects: Counter<'by' | 'reconnect'>;
  /** Deliveries per second over the last minute (the connections API's replica stats). */
  readonly deliveryRate = new RateMeter();
  /** The same events as plain totals, for the console's cluster view (replica-counters.ts). */
  readonly tally = new CounterTally();
  private lastDispatchAt: number | undefined;
  /** When the newest fan-out event kept unread came, by the clock of its turn (turnClock). */
  private lastSkipAt: number | undefined;
  /** Date.now() as read first in this turn of the event loop; undefined until then. */
  private turnNow: number | undefined;
  private readonly turnOver = () => {
    this.turnNow = undefined;
  };
  /**
   * Publish → written of the newest stamped fan-out event dispatched, or publish → taken in of a
   * skipped one noted since (eventSkipped): how far behind the broker the replica ran.
   */
  lastDelaySeconds: number | undefined;
  /** When eventSkipped notes the lag from a skipped event next (ms since the epoch). */
  private nextSkippedLagAt = 0;
  private readonly slowClosed: Counter<'transport'>;
  private readonly delivery: Histogram;
  /** Event types come from publishers: a bounded set of them names a series. */
  private readonly typeLabel: (type: string) => string;

  constructor(registry: Registry, maxEventTypes = 100) {
    this.typeLabel = boundedLabel(maxEventTypes);
    this.connections = new PendingCounts(
      gauge(registry, {
        name: 'gw_connections',
        help: 'Open frontend connections',
        labelNames: ['transport'],
        collect() {
          PendingCounts.flushInto(this);
        },
      }),
      'transport',
    );
    this.connectionsTotal = new PendingCounts(
      counter(registry, {
        name: 'gw_connections_opened_total',
        help: 'Frontend connections accepted',
        labelNames: ['transport'],
        collect() {
          PendingCounts.flushInto(this);
        },
      }),
      'transport',
    );
    const subscriptionsHeld = () => this.subscriptionsHeld;
    gauge(registry, {
      name: 'gw_subscriptions',
      help: 'Subscriptions held by this replica',
      collect() {
        this.set(subscriptionsHeld());
      },
    });
    this.forwarded = counter(registry, {
      name: 'gw_events_forwarded_total',
      help: 'Fan-out events dispatched to this replica, by CloudEvent type (the first METRICS_MAX_EVENT_TYPES types; later ones as "other")',
      labelNames: ['type'],
      collect() {
        PendingCounts.flushInto(this);
      },
    });
    this.forwardedCounts = new PendingCounts(this.forwarded, 'type');
    this.deliveries = counter(registry, {
      name: 'gw_event_deliveries_total',
      help: 'Events delivered to connections',
    });
    this.dropped = counter(registry, {
      name: 'gw_events_dropped_total',
      help: "Fan-out events not delivered: unreadable (not_json, no_type), in the gateway's own namespace (reserved: a gw.… type or the source gatehouse) or a duplicate of one held (same source and id)",
      labelNames: ['reason'],
    });
    this.fanoutEvents = new PendingCounts(
      counter(registry, {
        name: 'gw_fanout_events_total',
        help: 'Live fan-out events by what this replica did with them: skipped (no connection here subscribes to the type the record headers name: kept unread for resumes, the body not parsed) or dispatched (the body parsed and matched against the connections)',
        labelNames: ['outcome'],
        collect() {
          PendingCounts.flushInto(this);
        },
      }),
      'outcome',
    );
    this.rejected = counter(registry, {
      name: 'gw_connections_rejected_total',
      help: 'Connection attempts refused (bad_request, denied, rate_limited, at_capacity, unavailable)',
      labelNames: ['transport', 'reason'],
    });
    this.kills = counter(registry, {
      name: 'gw_session_kills_total',
      help: 'Connections closed by a session kill',
    });
    this.expired = counter(registry, {
      name: 'gw_connections_expired_total',
      help: 'Connections ended because the JWT they were admitted with expired',
    });
    this.resumes = counter(registry, {
      name: 'gw_resumes_total',
      help: 'Resumed connections and polls by where their missed events came from (ring, broker) or resync when they could not be served',
      labelNames: ['source'],
    });
    this.routedTypes = gauge(registry, {
      name: 'gw_fanout_routed_types',
      help: 'With FANOUT_ROUTING=interest: event types this replica reads from the fan-out stream (-1: every type, more are wanted than it filters by or a type pattern is wanted)',
    });
    this.replayReaders = gauge(registry, {
      name: 'gw_replay_readers',
      help: 'Broker subscriptions open for replaying the fan-out stream to resuming clients',
    });
    this.replayReadersOpened = counter(registry, {
      name: 'gw_replay_readers_opened_total',
      help: 'Broker subscriptions opened for replaying the fan-out stream to resuming clients (shared by the resumes they serve)',
    });
    this.replayedEvents = counter(registry, {
      name: 'gw_replayed_events_total',
      help: 'Events read from a broker replay for resuming clients (before their subscription filter)',
    });
    this.admitted = new PendingCounts(
      counter(registry, {
        name: 'gw_connects_admitted_total',
        help: 'Connects the rate limit admitted, as new connections or as reconnects (a connection token or a resume position, counted against MAX_RECONNECTS_PER_MINUTE)',
        labelNames: ['kind'],
        collect() {
          PendingCounts.flushInto(this);
        },
      }),
      'kind',
    );
    this.drained = counter(registry, {
      name: 'gw_connections_drained_total',
      help: 'Connections a stopping replica closed so that their clients reconnect elsewhere',
    });
    this.rescans = counter(registry, {
      name: 'gw_blacklist_rescans_total',
      help: 'Look-ups of the blacklist for every session held, after the blacklist watch had been cut off from the store',
    });
    this.apiRequests = counter(registry, {
      name: 'gw_connections_api_requests_total',
      help: 'Connections API requests this replica answered, by operation (list, get, disconnect, subscriptions, replicas) and answer (complete; partial: some replica did not answer in time)',
      labelNames: ['operation', 'answer'],
    });
    this.disconnects = counter(registry, {
      name: 'gw_connections_disconnected_total',
      help: 'Connections this replica ended through the connections API, by what named them (id, session, user) and the advice given (reconnect true or false)',
      labelNames: ['by', 'reconnect'],
    });
    this.slowClosed = counter(registry, {
      name: 'gw_slow_consumer_disconnects_total',
      help: 'Connections closed because their client left more than MAX_BUFFERED_BYTES of events unread',
      labelNames: ['transport'],
    });
    // Publish (the publisher's stamp) → written to this replica's connections: the hub's delay
    // behind the fan-out stream, clocks of both pods included. Not measured on buses without
    // headers (Kinesis).
    this.delivery = histogram(registry, {
      name: 'gw_fanout_delivery_seconds',
      help: 'Time from the publisher handing a fan-out event to the broker to this replica having written it to its connections (events it dispatched; not those skipped on their headers, which no connection here gets)',
      buckets: DELIVERY_BUCKETS,
    });
  }

  /** When the newest live fan-out event was dispatched or kept unread (ms since the epoch); undefined before the first. */
  get lastEventAt(): number | undefined {
    if (this.lastSkipAt === undefined) return this.lastDispatchAt;
    return Math.max(this.lastSkipAt, this.lastDispatchAt ?? 0);
  }

  connectionsApiAnswered(
    operation: 'list' | 'get' | 'disconnect' | 'subscriptions' | 'replicas',
    partial: boolean,
  ): void {
    this.apiRequests.inc({ operation, answer: partial ? 'partial' : 'complete' });
  }

  connectionsDisconnected(by: 'id' | 'session' | 'user', reconnect: boolean, n: number): void {
    if (n > 0) this.disconnects.inc({ by, reconnect: String(reconnect) }, n);
  }

  slowConsumerClosed(transport: TransportKind): void {
    this.slowClosed.inc({ transport });
    this.tally.slowConsumerClosed();
  }

  /**
   * A live fan-out event published at `publishedAt` (ms since the epoch) is delivered now: by
   * default when it was dispatched (eventDispatched comes first, so one clock read serves both).
   */
  eventDelivered(publishedAt: number, now = this.lastDispatchAt ?? Date.now()): void {
    // Another pod's clock may be a little ahead: never a negative delay.
    const seconds = Math.max(0, now - publishedAt) / 1000;
    this.lastDelaySeconds = seconds;
    this.delivery.observe(seconds);
    this.tally.delivered(seconds);
  }

  connectAdmitted(kind: ConnectKind): void {
    this.admitted.add(kind);
    this.tally.connected();
  }

  connectionsDrained(n: number): void {
    this.drained.inc(n);
  }

  blacklistRescanned(): void {
    this.rescans.inc();
  }

  resumed(source: 'ring' | 'broker' | 'resync'): void {
    this.resumes.inc({ source });
  }

  fanoutRoutes(types: number): void {
    this.routedTypes.set(types);
  }

  readersChanged(open: number, opened: boolean): void {
    this.replayReaders.set(open);
    if (opened) this.replayReadersOpened.inc();
  }

  replayed(events: number): void {
    this.replayedEvents.inc(events);
  }

  connectionOpened(transport: TransportKind, subscriptions: number): void {
    this.connections.add(transport);
    this.connectionsTotal.add(transport);
    this.subscriptionsHeld = subscriptions;
  }

  connectionClosed(transport: TransportKind, subscriptions: number): void {
    this.connections.add(transport, -1);
    this.subscriptionsHeld = subscriptions;
  }

  subscriptionsChanged(subscriptions: number): void {
    this.subscriptionsHeld = subscriptions;
  }

  eventDispatched(type: string, deliveries: number): void {
    this.forwardedCounts.add(this.typeLabel(type));
    this.lastDispatchAt = Date.now();
    this.tally.eventIn(deliveries);
    if (deliveries) {
      this.deliveries.inc(deliveries);
      this.deliveryRate.add(deliveries);
    }
  }

  /**
   * A live fan-out event the hub kept unread (no connection here wants its type), counted as a
   * forwarded event with no delivery, as a dispatched one with none is. Its time is the clock of
   * its turn of the event loop (turnClock), which is all lastEventAt needs.
   */
  eventKeptUnread(type: string): void {
    this.forwardedCounts.add(this.typeLabel(type));
    this.lastSkipAt = this.turnClock();
    this.tally.eventIn(0);
  }

  /**
   * Date.now() read once per turn of the event loop, for what events kept unread note: the records
   * of one fetch come in one turn, and a clock read costs a tenth of what such an event may in all
   * (a system call where the VM's clock has no vDSO, as on the box of the bench).
   */
  private turnClock(): number {
    if (this.turnNow === undefined) {
      this.turnNow = Date.now();
      setImmediate(this.turnOver);
    }
    return this.turnNow;
  }

  /** A live fan-out event dispatched: its body read and matched against the connections. */
  fanoutEvent(outcome: 'dispatched'): void {
    this.fanoutEvents.add(outcome);
  }

  /**
   * A live fan-out event skipped on its record's headers (kept unread, sent to no connection). It
   * is no delivery, so gw_fanout_delivery_seconds does not observe it: that histogram (the
   * dashboard's delivery latency, the GatehouseFanoutLag alert) is about what clients get, and a
   * replica would otherwise fill it with every other replica's events, the observation costing more
   * than the rest of the skip. The replica's lag behind the stream (`lagSeconds` of the replica
   * stats) is still noted from one skipped event a second, so a replica whose clients want none of
   * the stream shows how far behind it reads (by the turn's clock whether it is time to, then by
   * the clock itself).
   */
  eventSkipped(headers: Record<string, string>): void {
    this.fanoutEvents.add('skipped');
    if (this.turnClock() < this.nextSkippedLagAt) return;
    const now = Date.now();
    this.nextSkippedLagAt = now + 1000;
    const publishedAt = readPublishedAt(headers);
    if (publishedAt !== undefined) this.lastDelaySeconds = Math.max(0, now - publishedAt) / 1000;
  }

  eventDropped(reason: string): void {
    this.dropped.inc({ reason });
  }

  /** `status`: the HTTP status the client got, for the console's refusals (400, 403, 429, 503). */
  connectionRejected(transport: TransportKind, reason: string, status: number): void {
    this.rejected.inc({ transport, reason });
    this.tally.refused(status);
  }

  sessionKilled(connections: number): void {
    this.kills.inc(connections);
    this.tally.sessionKilled(connections);
  }

  connectionsExpired(connections: number): void {
    this.expired.inc(connections);
  }
}
