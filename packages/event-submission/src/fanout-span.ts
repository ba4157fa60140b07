/**
 * The PRODUCER span of an event put on the fan-out stream: under the active span (the request's
 * SERVER span, the source message's CONSUMER span, a flow task's span), else under the context the
 * event carries. The event leaves with this span's context as its `traceparent`, so a hub's
 * delivery is its child.
 */
import type { CloudEvent } from '@gatehouse/cloudevents';
import {
  activeOrCarriedContext,
  gatewayTracer,
  hopTraceContext,
  readTraceContextFromEvent,
  type Span,
  startProducerSpan,
  withTraceContext,
} from '@gatehouse/tracing';

/** `component`: the producing service, the span's instrumentation scope (`@gatehouse/<component>`). */
export function startFanoutSpan(
  component: string,
  system: string,
  topic: string,
  event: CloudEvent,
): { span: Span; sent: CloudEvent } {
  const parent = activeOrCarriedContext(readTraceContextFromEvent(event));
  const span = startProducerSpan(gatewayTracer(component), { system, destination: topic, event }, parent);
  return { span, sent: withTraceContext(event, hopTraceContext(span, undefined)) };
}
