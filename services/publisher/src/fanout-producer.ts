/**
 * Puts accepted CloudEvents on the fan-out stream as structured JSON (one line), the form every hub
 * replica reads, with the type, source and id in the record's headers too where the bus has them
 * (stream-headers in @gatehouse/cloudevents). A publish the bus cannot deliver rejects, so the
 * caller can answer 503 rather than acknowledge an event that went nowhere. While tracing, each
 * publish is a PRODUCER span and the event carries its context (fanout-span.ts); otherwise the
 * event's own traceparent is kept as is.
 */
import { type Bus, publishedAtHeaders } from '@gatehouse/bus';
import { type CloudEvent, serializeJsonEvent, streamEventHeaders } from '@gatehouse/cloudevents';
import { endSpan, isTracingActive } from '@gatehouse/tracing';
import { startFanoutSpan } from './fanout-span.ts';
import type { PublisherMetrics } from './publisher-metrics.ts';

export interface FanoutProducer {
  publish(event: CloudEvent, origin: { source: string; topic: string; receivedAt: bigint }): Promise<string>;
}

/** `routed` (FANOUT_ROUTING=interest): each event carries its type as its route (bus.ts). */
export function createFanoutProducer(
  bus: Bus,
  topic: string,
  metrics: PublisherMetrics,
  routed = false,
): FanoutProducer {
  return {
    async publish(event, origin) {
      const traced = isTracingActive() ? startFanoutSpan(bus.kind, topic, event) : undefined;
      const json = serializeJsonEvent(traced?.sent ?? event);
      try {
        // The hubs measure their delay behind the stream from this stamp (published-at.ts), and tell
        // from the type, source and id whether they need the body at all (stream-headers.ts).
        await bus.publish(
          topic,
          {
            value: json,
            ...(bus.capabilities.headers && {
              headers: { ...publishedAtHeaders(), ...streamEventHeaders(event) },
            }),
          },
          routed ? { route: event.type } : {},
        );
        if (traced) endSpan(traced.span);
        metrics.producedOk(bus.kind, topic);
        metrics.consumedOk(
          origin.source,
          origin.topic,
          Number(process.hrtime.bigint() - origin.receivedAt) / 1e9,
        );
        return json;
      } catch (err) {
        if (traced) endSpan(traced.span, err);
        metrics.producedFailed(bus.kind, topic);
        metrics.consumedFailed(origin.source, origin.topic, 'fanout_unavailable');
        throw err;
      }
    },
  };
}
