/**
 * One inbound record through its flow, the way Mercury's Kafka flow adapter hands it over: the
 * input dataset is `input.body` (bytes, or a decoded JSON object/array with `serializer: json`),
 * `input.header` (the record's headers, names lower-cased) and `input.metadata` (topic or subject,
 * partition, offset, timestamp, key). The correlation id comes from the binding's header (`cid`),
 * and a W3C `traceparent` header continues the producer's trace into the flow's steps. A run
 * fails on an abort or a non-2xx answer; it is tried again up to kafka.flow.max.retries times.
 */
import type { FlowRunner } from '@gatehouse/flows';
import { exceedsJsonDepth, type Logger } from '@gatehouse/service-kit';
import type { Tracer } from '@opentelemetry/api';
import { flowTraceOf } from '../flows/index.ts';
import { newCorrelationId, parseTraceparent, RequestTrace } from '../tracing/index.ts';
import type { AdapterMetrics } from './adapter-metrics.ts';
import type { Binding } from './binding.ts';
import { chooseFlow } from './routing-rules.ts';

export interface InboundRecord {
  value: Buffer | null;
  /** Names lower-cased. */
  headers: Record<string, string>;
  metadata: Record<string, unknown>;
  /** Value, key and headers together. */
  bytes: number;
  /** Where it came from, for trace records: `kafka://orders`. */
  source: string;
}

export type RunOutcome = { kind: 'done' } | { kind: 'failed'; error: string };

export interface RecordRunContext {
  runner: FlowRunner;
  metrics: AdapterMetrics;
  logger: Logger;
  tracer: Tracer;
  origin: string;
  maxRecordBytes: number;
  maxJsonDepth: number;
  maxRetries: number;
  backoffMs: number;
}

/** Runs the record's flow until it succeeds or the retries are spent; `between` runs before a retry. */
export async function runRecord(
  binding: Binding,
  record: InboundRecord,
  ctx: RecordRunContext,
  between?: () => Promise<void>,
): Promise<RunOutcome> {
  if (record.bytes > ctx.maxRecordBytes)
    return {
      kind: 'failed',
      error: `record of ${record.bytes} bytes is larger than flow.adapter.max-record-bytes (${ctx.maxRecordBytes})`,
    };
  const body = decodeBody(record.value, binding.serializer, ctx.maxJsonDepth);
  const flow = chooseFlow(binding.routing, { headers: record.headers, body });
  const input = { body, header: record.headers, metadata: record.metadata };
  let error = '';
  for (let attempt = 0; attempt <= ctx.maxRetries; attempt++) {
    if (attempt > 0) {
      ctx.metrics.retries.inc({ binding: binding.label });
      await new Promise((resolve) => setTimeout(resolve, ctx.backoffMs));
      await between?.();
    }
    error = await runOnce(binding, record, flow, input, ctx);
    if (error === '') return { kind: 'done' };
    ctx.metrics.failures.inc({ binding: binding.label });
    ctx.logger.warn({ binding: binding.label, flow, attempt, error }, 'flow adapter: flow run failed');
  }
  return { kind: 'failed', error };
}

/** '' when the flow answered 2xx, else what went wrong. */
async function runOnce(
  binding: Binding,
  record: InboundRecord,
  flow: string,
  input: Record<string, unknown>,
  ctx: RecordRunContext,
): Promise<string> {
  const { headers } = record;
  const cid = headers[binding.correlationHeader] || newCorrelationId();
  const parent = parseTraceparent(headers['traceparent'] ?? headers[binding.traceparentHeader]);
  const trace =
    parent === undefined
      ? undefined
      : new RequestTrace(
          ctx.tracer,
          ctx.logger,
          ctx.origin,
          parent.traceId,
          record.source,
          parent.parentSpanId,
        );
  try {
    const result = await ctx.runner.run(flow, input, { cid, ...(trace && { trace: flowTraceOf(trace) }) });
    if (result.kind === 'abort') return `${result.status} ${textOf(result.message)}`;
    return result.status >= 200 && result.status < 300 ? '' : `flow answered ${result.status}`;
  } finally {
    trace?.flush();
  }
}

function decodeBody(value: Buffer | null, serializer: 'json' | undefined, maxDepth: number): unknown {
  if (value === null || serializer !== 'json') return value;
  const first = value.find((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09);
  // Only an object or an array is decoded, as Mercury does; anything else stays bytes.
  if (first !== 0x7b && first !== 0x5b) return value;
  try {
    const decoded = JSON.parse(value.toString('utf8')) as unknown;
    // Deeper than MAX_JSON_DEPTH, later recursive walks could overflow: such a body stays bytes.
    return exceedsJsonDepth(decoded, maxDepth) ? value : decoded;
  } catch {
    return value;
  }
}

function textOf(message: unknown): string {
  return typeof message === 'string' ? message : JSON.stringify(message);
}

/** The headers a dead-lettered record carries: its own, plus where it came from and why it failed. */
export function deadLetterHeaders(
  record: InboundRecord,
  originName: string,
  error: string,
): Record<string, string> {
  const origin = String(record.metadata['topic'] ?? record.metadata['subject']);
  return { ...record.headers, [originName]: origin, 'dlq.error': error.slice(0, 1000) };
}
