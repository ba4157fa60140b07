/**
 * Trace and span ids: W3C `traceparent` parsing (version-traceid-parentid-flags; lower-case hex,
 * not all zeros) and new ids.
 */
import { randomBytes, randomUUID } from 'node:crypto';

export interface ParentContext {
  traceId: string;
  parentSpanId: string;
}

const traceIdPattern = /^[0-9a-f]{32}$/;
const spanIdPattern = /^[0-9a-f]{16}$/;

export function parseTraceparent(value: string | undefined): ParentContext | undefined {
  if (!value) return undefined;
  const parts = value.trim().split('-');
  if (parts.length < 4) return undefined;
  const [version, traceId, parentSpanId, flags] = parts as [string, string, string, string];
  if (!/^[0-9a-f]{2}$/.test(version) || version === 'ff' || !/^[0-9a-f]{2}$/.test(flags)) return undefined;
  if (!traceIdPattern.test(traceId) || /^0+$/.test(traceId)) return undefined;
  if (!spanIdPattern.test(parentSpanId) || /^0+$/.test(parentSpanId)) return undefined;
  return { traceId, parentSpanId };
}

/** 32 lower-case hex characters: a UUID without its dashes. */
export function newId(): string {
  return randomUUID().replaceAll('-', '');
}

/**
 * Correlation ids only need to be unique, so they are a random prefix and a counter: 32 hex
 * characters like a trace id, without a random draw per request (a table lookup per counter byte
 * is several times cheaper than formatting the number). The prefix is drawn again when the 32-bit
 * counter wraps.
 */
const hexByte = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
let cidPrefix = randomBytes(12).toString('hex');
let cidCounter = 0;

export function newCorrelationId(): string {
  cidCounter = (cidCounter + 1) >>> 0;
  if (cidCounter === 0) cidPrefix = randomBytes(12).toString('hex');
  const c = cidCounter;
  return (
    cidPrefix +
    hexByte[c >>> 24]! +
    hexByte[(c >>> 16) & 255]! +
    hexByte[(c >>> 8) & 255]! +
    hexByte[c & 255]!
  );
}

export function newSpanId(): string {
  return randomBytes(8).toString('hex');
}

export function isW3cTraceId(id: string): boolean {
  return traceIdPattern.test(id) && !/^0+$/.test(id);
}
