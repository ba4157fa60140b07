/** Request limits every Gatehouse HTTP server enforces before a service sees the request. */
import type { IncomingMessage } from 'node:http';

/** MAX_HEADER_VALUE_LENGTH's default: the spec's 16384 bytes. */
export const defaultMaxHeaderValueLength = 16384;

export interface HttpLimits {
  /** Longest accepted header value, in bytes (the spec's 16384). */
  maxHeaderValueLength: number;
}

/** Returns the name of the first header whose value is longer than allowed, if any. */
export function oversizedHeader(req: IncomingMessage, limits: HttpLimits): string | undefined {
  const raw = req.rawHeaders;
  for (let i = 1; i < raw.length; i += 2) {
    if (Buffer.byteLength(raw[i]!) > limits.maxHeaderValueLength) return raw[i - 1];
  }
  return undefined;
}

/**
 * node:http's own limit is on all headers together; it must sit above the per-value limit so that a
 * single 16 KiB value plus ordinary headers still reaches our clearer per-value check.
 */
export function nodeMaxHeaderSize(limits: HttpLimits): number {
  return limits.maxHeaderValueLength * 4 + 16 * 1024;
}
