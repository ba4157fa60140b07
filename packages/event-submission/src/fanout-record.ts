/**
 * Puts a CloudEvent on the fan-out stream as structured JSON (one line), the form every hub replica
 * reads, with the type, source and id in the record's headers too where the bus has them
 * (stream-headers in @gatehouse/cloudevents) and the publish time the hubs measure their delay by.
 * Resolves with the JSON written once the bus took it and rejects otherwise, so a producer never
 * acknowledges an event that went nowhere. While tracing, each publish is a PRODUCER span and the
 * event carries its context (fanout-span.ts); otherwise the event's own traceparent is kept.
 */
import { type Bus, publishedAtHeaders } from '@gatehouse/bus';
import { type CloudEvent, serializeJsonEvent, streamEventHeaders } from '@gatehouse/cloudevents';
import { endSpan, isTracingActive } from '@gatehouse/tracing';
import { startFanoutSpan } from './fanout-span.ts';

export interface FanoutTarget {
  bus: Bus;
  /** FANOUT_TOPIC. */
  topic: string;
  /** FANOUT_ROUTING=interest: each event carries its type as its route (bus.ts). */
  routed: boolean;
  /** The producing service, for the span's scope. */
  component: string;
}

export async function publishOnFanout(target: FanoutTarget, event: CloudEvent): Promise<string> {
  const { bus, topic } = target;
  const traced = isTracingActive() ? startFanoutSpan(target.component, bus.kind, topic, event) : undefined;
  const json = serializeJsonEvent(traced?.sent ?? event);
  try {
    await bus.publish(
      topic,
      {
        value: json,
        ...(bus.capabilities.headers && {
          headers: { ...publishedAtHeaders(), ...streamEventHeaders(event) },
        }),
      },
      target.routed ? { route: event.type } : {},
    );
    if (traced) endSpan(traced.span);
    return json;
  } catch (err) {
    if (traced) endSpan(traced.span, err);
    throw err;
  }
}
