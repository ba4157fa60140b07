/**
 * The SERVER span of an event submitted over HTTP. It starts once the event is parsed (with the
 * request's arrival as its start time), so its parent can be the `traceparent` header or, without
 * one, the context the event itself carries (CloudEvents distributed-tracing extension); a header
 * and an event of different traces make the event's context a link.
 */
import type { IncomingMessage } from 'node:http';
import type { CloudEvent } from '@gatehouse/cloudevents';
import {
  endHttpServerSpan,
  gatewayTracer,
  linkOtherTrace,
  readTraceContextFromEvent,
  readTraceContextFromHeaders,
  type Span,
  startHttpServerSpan,
  withActiveSpan,
} from '@gatehouse/tracing';

const tracer = gatewayTracer('publisher');

export class EventRequestSpan {
  private readonly req: IncomingMessage;
  private readonly route: string;
  private readonly arrivedAt = Date.now();
  private span: Span | undefined;

  constructor(req: IncomingMessage, route: string) {
    this.req = req;
    this.route = route;
  }

  /** Starts the span for the parsed event and runs `fn` inside it. */
  run<T>(event: CloudEvent, fn: () => Promise<T>): Promise<T> {
    return withActiveSpan(this.start(event), fn);
  }

  /** Ends it with the answer's status; a request refused before its event was parsed gets one too. */
  end(status: number): void {
    endHttpServerSpan(this.span ?? this.start(undefined), status);
  }

  private start(event: CloudEvent | undefined): Span {
    const header = readTraceContextFromHeaders(this.req.headers);
    const carried = event === undefined ? undefined : readTraceContextFromEvent(event);
    const scheme = (this.req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
    this.span = startHttpServerSpan(
      tracer,
      { method: this.req.method ?? 'POST', path: this.route, route: this.route, scheme },
      header ?? carried,
      this.arrivedAt,
    );
    if (header !== undefined) linkOtherTrace(this.span, carried);
    return this.span;
  }
}
