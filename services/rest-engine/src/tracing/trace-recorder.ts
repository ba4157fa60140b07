/**
 * Trace records of traced endpoints: one per function that handled the request (authentication,
 * target, secondaries, and the response writer `async.http.response`), sharing one trace id.
 * Each record is written to the log (`{trace: {...}}`) and as an OpenTelemetry span under the
 * caller's W3C context, so the same chain shows up in a tracing backend: the first step (the
 * authentication, else the primary) is the request's SERVER span, every other step is INTERNAL;
 * secondaries run beside the primary, under the same parent.
 */
import {
  context as otelContext,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace as otelTrace,
  TraceFlags,
} from '@opentelemetry/api';
import type { Logger } from '@gatehouse/service-kit';
import { isW3cTraceId, newSpanId } from './trace-context.ts';

export interface TraceRecord {
  origin: string;
  id: string;
  path: string;
  service: string;
  from: string;
  start: string;
  /** Milliseconds, with fractions. */
  exec_time: number;
  success: boolean;
  status: number;
  exception?: string;
  span_id: string;
  parent_span_id?: string;
  /** Whole request time in milliseconds, on the first record. */
  round_trip?: number;
  /** Flow steps: the flow id and task name (tasks), or the run summary (flows). */
  annotations?: Record<string, unknown>;
}

export interface TraceStep {
  service: string;
  from: string;
  startedAt: number;
  startIso: string;
  spanId: string;
  parentSpanId: string | undefined;
  span: Span | undefined;
}

/** The trace of one request: steps are opened and closed as functions run, records flushed at the end. */
export class RequestTrace {
  readonly id: string;
  readonly path: string;
  private readonly records: TraceRecord[] = [];
  private readonly tracer: Tracer;
  private readonly origin: string;
  private readonly inboundParent: string | undefined;
  private readonly startedAt = performance.now();
  private readonly logger: Logger;
  /** Records written so far; once the response is out, late records are written as they end. */
  private flushed = 0;
  /** Whether the request's SERVER span (its first step without a parent step) has started. */
  private serverSpanStarted = false;
  private responded = false;

  constructor(
    tracer: Tracer,
    logger: Logger,
    origin: string,
    id: string,
    path: string,
    inboundParent: string | undefined,
  ) {
    this.tracer = tracer;
    this.logger = logger;
    this.origin = origin;
    this.id = id;
    this.path = path;
    this.inboundParent = inboundParent;
  }

  /** `attributes` are added to the span (flow steps: `gw.flow.id`, `gw.flow.task`). */
  begin(
    service: string,
    from: string,
    parent: TraceStep | undefined,
    attributes?: Record<string, string>,
  ): TraceStep {
    const parentSpanId = parent?.spanId ?? this.inboundParent;
    const span = this.startSpan(service, parent);
    if (span && attributes) span.setAttributes(attributes);
    const ids = span?.spanContext();
    const spanId = ids && ids.traceId === this.id ? ids.spanId : newSpanId();
    return {
      service,
      from,
      startedAt: performance.now(),
      startIso: new Date().toISOString(),
      spanId,
      parentSpanId,
      span,
    };
  }

  end(step: TraceStep, status: number, error?: string, annotations?: Record<string, unknown>): void {
    const record: TraceRecord = {
      origin: this.origin,
      id: this.id,
      path: this.path,
      service: step.service,
      from: step.from,
      start: step.startIso,
      exec_time: Math.round((performance.now() - step.startedAt) * 1000) / 1000,
      success: error === undefined && status < 400,
      status,
      span_id: step.spanId,
    };
    if (step.parentSpanId) record.parent_span_id = step.parentSpanId;
    if (error !== undefined) record.exception = error;
    if (annotations !== undefined) record.annotations = annotations;
    this.records.push(record);
    if (step.span) {
      step.span.setAttribute('http.response.status_code', status);
      if (!record.success)
        step.span.setStatus({ code: SpanStatusCode.ERROR, message: error ?? `status ${status}` });
      step.span.end();
    }
    if (this.responded) this.flush();
  }

  /**
   * Writes the records not written yet to the log (the first carries the whole round trip); called
   * once the response is out, after which a late record (a secondary, a function that ran past the
   * timeout) is written when it ends.
   */
  flush(): void {
    this.responded = true;
    const first = this.records[0];
    if (first && this.flushed === 0) {
      first.round_trip = Math.round((performance.now() - this.startedAt) * 1000) / 1000;
    }
    for (; this.flushed < this.records.length; this.flushed++) {
      this.logger.info({ trace: this.records[this.flushed] }, 'trace');
    }
  }

  private startSpan(service: string, parent: TraceStep | undefined): Span | undefined {
    let ctx = otelContext.active();
    if (parent?.span) ctx = otelTrace.setSpan(ctx, parent.span);
    else if (isW3cTraceId(this.id)) {
      // Continue the caller's trace (or the one this engine made up) under its id.
      ctx = otelTrace.setSpanContext(ctx, {
        traceId: this.id,
        spanId: this.inboundParent ?? newSpanId(),
        traceFlags: TraceFlags.SAMPLED,
        isRemote: true,
      });
    }
    // One SERVER span per request; a secondary fired beside the primary is INTERNAL, like the rest.
    const isServer = parent === undefined && !this.serverSpanStarted;
    this.serverSpanStarted = true;
    const span = this.tracer.startSpan(
      service,
      {
        kind: isServer ? SpanKind.SERVER : SpanKind.INTERNAL,
        attributes: {
          'gw.trace.id': this.id,
          'gw.trace.path': this.path,
          'gw.trace.from': parent?.service ?? 'http.request',
        },
      },
      ctx,
    );
    return span.isRecording() ? span : undefined;
  }
}
