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

export function newSpanId(): string {
  return randomBytes(8).toString('hex');
}

export function isW3cTraceId(id: string): boolean {
  return traceIdPattern.test(id) && !/^0+$/.test(id);
}
