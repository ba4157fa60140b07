/**
 * The CONSUMER span of one fan-out event on this replica: `deliver <topic>`, a child of the context
 * the event carries, covering the matching and the sends, with the number of connections it went
 * to. One span per event and replica, never one per connection: a delivery to 10,000 connections
 * costs the same one span as a delivery to one.
 */
import {
  ATTR_GW_DELIVERY_RECIPIENTS,
  endSpan,
  gatewayTracer,
  readTraceContextFromEvent,
  startConsumerSpan,
  withActiveSpan,
} from '@gatehouse/tracing';

const tracer = gatewayTracer('push-hub');

export interface FanoutSource {
  /** The fan-out bus kind (`messaging.system`). */
  system: string;
  topic: string;
}

/** Runs `deliver` (which answers how many connections got the event) inside the event's span. */
export function traceDelivery(
  source: FanoutSource,
  event: Record<string, unknown>,
  deliver: () => number,
): number {
  const span = startConsumerSpan(
    tracer,
    { system: source.system, destination: source.topic, operation: 'deliver', event },
    readTraceContextFromEvent(event),
  );
  try {
    const recipients = withActiveSpan(span, deliver);
    span.setAttribute(ATTR_GW_DELIVERY_RECIPIENTS, recipients);
    endSpan(span);
    return recipients;
  } catch (err) {
    endSpan(span, err);
    throw err;
  }
}
