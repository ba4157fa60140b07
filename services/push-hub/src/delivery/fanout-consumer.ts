/**
 * The replica's subscription to the fan-out stream. With the warm-up, it starts with the stream's
 * newest `ringSize` events: those up to where the subscription went live (`liveAfter`) only fill
 * the ring, so a resume after a restart of the replica is served from memory; the later ones are
 * dispatched to connections. Resolves once the ring is filled, so the replica takes connections
 * only then. Each live event dispatched that the publisher stamped is timed from its publish to its
 * delivery here (gw_fanout_delivery_seconds): the replica's delay behind the stream. Warm-up events
 * and skipped ones (below) are not.
 *
 * A record whose headers name its type, source and id (the publisher's, stream-headers in
 * @gatehouse/cloudevents) is routed by them before its body is touched: when no connection here
 * subscribes to the type (nor a long poll waits for it), the event is kept unread in the ring for
 * the resumes that may reach it and sent to nobody (gw_fanout_events_total{outcome="skipped"});
 * warm-up events are kept unread too. Otherwise, and for a record without those headers (an older
 * publisher, a bus without headers), the body is read and dispatched as it always was.
 */
import { type Bus, type Message, readPublishedAt, type Subscription } from '@gatehouse/bus';
import type { Logger } from '@gatehouse/service-kit';
import type { RingEvent } from './event-ring.ts';
import type { Hub } from './hub.ts';
import type { HubMetrics } from '../metrics/index.ts';
import { readEventHeaders } from './stream-event.ts';

export interface FanoutConsumerOptions {
  bus: Bus;
  topic: string;
  hub: Hub;
  /** Fill the ring from the stream first (where the bus can start with the newest messages). */
  warmUp: boolean;
  /** Interest routing (fanout-interest.ts): the subscription starts limited to these types. */
  routes?: ReadonlySet<string> | undefined;
  /** Called for every event dispatched live (long-poll wake-ups). */
  dispatched(e: RingEvent): void;
  /** Whether something besides the hub's connections waits for events of the type (long polls). */
  wants?(type: string): boolean;
  /**
   * Measures publish → delivered for every live event dispatched that the publisher stamped, and
   * counts the live events skipped (read from their headers only) and dispatched.
   */
  metrics?: Pick<HubMetrics, 'eventDelivered' | 'fanoutEvent' | 'eventSkipped'>;
  logger: Logger;
}

export async function consumeFanout(options: FanoutConsumerOptions): Promise<Subscription> {
  const { bus, hub, logger } = options;
  const warmUp = options.warmUp && bus.capabilities.tail;
  const warmed = warmUpProgress();
  let subscription: Subscription | undefined;
  let early: Message[] | undefined = [];
  // Once past `liveAfter`, every message is live, even if positions start over (a stream made anew).
  let live = false;
  const { metrics, wants } = options;
  const route = (m: Message) => {
    const headers = readEventHeaders(m.headers);
    const liveAfter = subscription?.liveAfter;
    if (!live && liveAfter !== undefined) {
      const order = bus.comparePositions(m.position, liveAfter);
      if (order <= 0) {
        if (headers !== undefined) hub.keepUnread(m.position, m.value, headers, false);
        else hub.remember(m.position, m.value.toString('utf8'));
        live = order === 0;
        if (live) warmed.done();
        else warmed.progress();
        return;
      }
    }
    if (!live) {
      live = true;
      warmed.done();
    }
    if (headers !== undefined && !hub.wants(headers.type) && wants?.(headers.type) !== true) {
      hub.keepUnread(m.position, m.value, headers, true);
      metrics?.eventSkipped(m.headers);
      return;
    }
    metrics?.fanoutEvent('dispatched');
    const e = hub.dispatch(m.position, m.value.toString('utf8'));
    if (e === undefined) return;
    options.dispatched(e);
    const publishedAt = readPublishedAt(m.headers);
    if (publishedAt !== undefined) metrics?.eventDelivered(publishedAt);
  };
  subscription = await bus.subscribe(options.topic, (m) => (early ? void early.push(m) : route(m)), {
    onError: (err) => logger.warn({ err }, 'fan-out stream error'),
    ...(warmUp && { last: hub.ring.capacity }),
    ...(options.routes && { routes: options.routes }),
  });
  // Messages may arrive before subscribe resolves with `liveAfter`: they wait until it is known.
  const arrived = early;
  early = undefined;
  for (const m of arrived) route(m);
  if (!warmUp || subscription.liveAfter === undefined) warmed.done();
  else warmed.progress();
  const started = Date.now();
  await warmed.finished;
  if (warmUp) logger.info({ events: hub.ring.size, ms: Date.now() - started }, 'event buffer warmed up');
  return subscription;
}

/**
 * When the warm-up is over: at the message where the subscription went live, at the first live
 * one, or after a quiet spell (the newest message may be gone, so the one at `liveAfter` never
 * comes).
 */
function warmUpProgress(quietMs = 2000) {
  const finished = Promise.withResolvers<void>();
  let timer: NodeJS.Timeout | undefined;
  let over = false;
  const done = () => {
    over = true;
    clearTimeout(timer);
    finished.resolve();
  };
  const progress = () => {
    if (over) return;
    clearTimeout(timer);
    timer = setTimeout(done, quietMs);
    timer.unref();
  };
  return { finished: finished.promise, done, progress };
}
