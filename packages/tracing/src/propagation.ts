/**
 * Carrying a trace context across hops: HTTP headers in and out, CloudEvent attributes in and out
 * (the CloudEvents distributed tracing extension: `traceparent` and `tracestate` as top-level
 * extension attributes), and a new span id for each hop the gateway makes.
 *
 * Unlike RIG, which dropped `tracestate` on consumed events, the state is carried on: the spec
 * says a vendor MUST pass on the tracestate it received.
 */
import { randomFillSync } from 'node:crypto';
import { formatTraceParent, parseTraceParent, sampledFlag, type TraceParent } from './traceparent.ts';
import { formatTraceState, parseTraceState, type TraceState } from './tracestate.ts';

export interface TraceContext {
  traceparent: TraceParent;
  tracestate: TraceState;
}

/** node:http's incoming or outgoing headers, or any plain object of header values. */
export type HeaderRecord = Record<string, string | readonly string[] | number | undefined>;

/** The context of an incoming request; undefined (start a new trace) when there is none or it is invalid. */
export function readTraceContextFromHeaders(headers: HeaderRecord): TraceContext | undefined {
  const traceparent = parseTraceParent(headerValues(headers, 'traceparent'));
  // The spec: a vendor that failed to parse traceparent must not parse tracestate.
  if (traceparent === undefined) return undefined;
  return { traceparent, tracestate: parseTraceState(headerValues(headers, 'tracestate')) };
}

/**
 * Sets `traceparent` (and `tracestate` when not empty) on outgoing headers, replacing any existing
 * ones whatever their case; returns the same object.
 */
export function writeTraceContextToHeaders<H extends HeaderRecord>(headers: H, context: TraceContext): H {
  const record = headers as HeaderRecord;
  for (const name of Object.keys(record)) {
    const lower = name.toLowerCase();
    if (lower === 'traceparent' || lower === 'tracestate') delete record[name];
  }
  Object.assign(record, traceContextAttributes(context));
  return headers;
}

/** The context an event carries in its `traceparent` and `tracestate` attributes. */
export function readTraceContextFromEvent(
  event: Readonly<Record<string, unknown>>,
): TraceContext | undefined {
  const traceparent =
    typeof event['traceparent'] === 'string' ? parseTraceParent(event['traceparent']) : undefined;
  if (traceparent === undefined) return undefined;
  const state = event['tracestate'];
  return { traceparent, tracestate: parseTraceState(typeof state === 'string' ? state : undefined) };
}

/** A copy of the event carrying the context; an old `tracestate` goes when the new one is empty. */
export function withTraceContext<E extends object>(event: E, context: TraceContext): E {
  const { tracestate: _old, ...rest } = event as Record<string, unknown>;
  return { ...rest, ...traceContextAttributes(context) } as E;
}

/** `{ traceparent, tracestate? }` as header values or event attributes. */
export function traceContextAttributes(context: TraceContext): { traceparent: string; tracestate?: string } {
  const traceparent = formatTraceParent(context.traceparent);
  const tracestate = formatTraceState(context.tracestate);
  return tracestate === '' ? { traceparent } : { traceparent, tracestate };
}

/**
 * The context for the next hop: same trace, a new span id, the parent's flags and state. Without a
 * parent a new trace starts, not sampled unless asked: the spec's default for a component that
 * leaves the recording decision to others.
 */
export function startHop(
  parent: TraceContext | undefined,
  options: { sampled?: boolean } = {},
): TraceContext {
  if (parent === undefined) {
    const traceFlags = options.sampled ? sampledFlag : 0;
    return {
      traceparent: { version: '00', traceId: newTraceId(), parentId: newSpanId(), traceFlags },
      tracestate: [],
    };
  }
  const { traceId, traceFlags } = parent.traceparent;
  return {
    traceparent: { version: '00', traceId, parentId: newSpanId(), traceFlags },
    tracestate: parent.tracestate,
  };
}

export function newTraceId(): string {
  return randomNonZeroHex(16);
}

export function newSpanId(): string {
  return randomNonZeroHex(8);
}

/**
 * Ids come from a pool of random bytes refilled 4 KiB at a time: one getrandom call per ~500 span
 * ids instead of one per id (a sync randomBytes per forwarded request was ~8 % of the proxy's CPU).
 */
const randomPool = Buffer.allocUnsafe(4096);
let poolOffset = randomPool.length;

function randomNonZeroHex(bytes: number): string {
  for (;;) {
    if (poolOffset + bytes > randomPool.length) {
      randomFillSync(randomPool);
      poolOffset = 0;
    }
    const id = randomPool.toString('hex', poolOffset, poolOffset + bytes);
    poolOffset += bytes;
    if (!/^0+$/.test(id)) return id;
  }
}

/** The values of a header under any case of its name, in order; one value stays a string. */
function headerValues(headers: HeaderRecord, name: string): string | string[] | undefined {
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    if (Array.isArray(value)) values.push(...(value as string[]));
    else values.push(String(value));
  }
  return values.length === 0 ? undefined : values.length === 1 ? values[0] : values;
}
