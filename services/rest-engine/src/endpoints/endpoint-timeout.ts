/**
 * An endpoint's `timeout` in rest.yaml, read with the gateway's one duration parser
 * (@gatehouse/service-kit duration.ts: `30s`, `250ms`, `2m`; a bare number is milliseconds), at
 * least 1 s as in Mercury. Mercury read a bare number as seconds: `timeout: 20` is below the floor
 * now and is refused with the spelling that means what it meant, instead of becoming 20 ms.
 */
import { checkDuration, isBareNumber, parseDuration } from '@gatehouse/service-kit';

const bounds = { min: '1s' };

/** Milliseconds, or the reason the value is refused. */
export function endpointTimeout(value: unknown): number | string {
  if (typeof value !== 'string' && typeof value !== 'number')
    return `timeout must be a duration such as 30s, got ${JSON.stringify(value)}`;
  try {
    return checkDuration(parseDuration(value), bounds);
  } catch (err) {
    const n = String(value).trim();
    const hint = isBareNumber(value) ? ` (a bare number is milliseconds); write ${n}s for ${n} seconds` : '';
    return `timeout ${JSON.stringify(value)} ${(err as Error).message}${hint}`;
  }
}

/** `30 seconds`, `1.5 seconds`, `250 ms`: how a timeout reads in 408 messages. */
export function describeTimeout(ms: number): string {
  return ms % 1000 === 0 || ms > 1000 ? `${ms / 1000} seconds` : `${ms} ms`;
}
