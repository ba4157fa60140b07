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
 * Correlation ids only need to be unique, so they are a random per-process prefix and a counter:
 * 32 hex characters like a trace id, without a random draw per request.
 */
const cidPrefix = randomBytes(8).toString('hex');
let cidCounter = randomBytes(4).readUInt32BE(0);

export function newCorrelationId(): string {
  cidCounter = (cidCounter + 1) % 0x1_0000_0000_0000;
  return cidPrefix + cidCounter.toString(16).padStart(16, '0');
}

export function newSpanId(): string {
  return randomBytes(8).toString('hex');
}

export function isW3cTraceId(id: string): boolean {
  return traceIdPattern.test(id) && !/^0+$/.test(id);
}
