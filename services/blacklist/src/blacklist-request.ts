/**
 * The body of `POST /vN/session-blacklist`: `{"sessionId": "abc", "validityInSeconds": 60}`.
 * `validityInSeconds` is a whole number of seconds; a numeric string ("60") is still accepted, as
 * older clients (and /v1) send one. Every rejection names the field, unlike RIG's
 * `Expected non-empty string, got …`, so a client can tell which value to fix.
 */
import type { IncomingMessage } from 'node:http';
import { HttpError, readBody } from '@gatehouse/service-kit';

export interface BlacklistRequest {
  sessionId: string;
  validityInSeconds: number;
}

export interface BlacklistRequestLimits {
  /** Largest accepted validityInSeconds. */
  maxValiditySeconds: number;
}

/** Longest accepted session id: ids come from JWT claims, usually UUIDs; this bounds keys and URLs. */
export const maxSessionIdLength = 1024;
const maxBodyBytes = 16 * 1024;

export class InvalidBlacklistRequest extends Error {
  override readonly name = 'InvalidBlacklistRequest';
}

export async function readBlacklistRequest(
  req: IncomingMessage,
  limits: BlacklistRequestLimits,
): Promise<BlacklistRequest> {
  const text = (await readBody(req, maxBodyBytes)).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new InvalidBlacklistRequest(
      'Expected a JSON object body with "sessionId" and "validityInSeconds", got text that is not JSON',
    );
  }
  return parseBlacklistRequest(body, limits);
}

export function parseBlacklistRequest(body: unknown, limits: BlacklistRequestLimits): BlacklistRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new InvalidBlacklistRequest(
      `Expected a JSON object body with "sessionId" and "validityInSeconds", got ${shown(body)}`,
    );
  const fields = body as Record<string, unknown>;
  return {
    sessionId: sessionIdFrom(fields['sessionId']),
    validityInSeconds: validityFrom(fields['validityInSeconds'], limits.maxValiditySeconds),
  };
}

function sessionIdFrom(value: unknown): string {
  if (value === undefined || value === null)
    throw new InvalidBlacklistRequest('Missing value for "sessionId"');
  if (typeof value !== 'string' || value === '')
    throw new InvalidBlacklistRequest(`Expected a non-empty string for "sessionId", got ${shown(value)}`);
  if (value.length > maxSessionIdLength)
    throw new InvalidBlacklistRequest(
      `Expected at most ${maxSessionIdLength} characters for "sessionId", got ${value.length}`,
    );
  return value;
}

function validityFrom(value: unknown, max: number): number {
  const field = '"validityInSeconds"';
  if (value === undefined || value === null) throw new InvalidBlacklistRequest(`Missing value for ${field}`);
  const seconds = numberFrom(value);
  if (seconds === undefined)
    throw new InvalidBlacklistRequest(`Expected a number for ${field}, got ${shown(value)}`);
  if (!Number.isInteger(seconds))
    throw new InvalidBlacklistRequest(`Expected a whole number of seconds for ${field}, got ${shown(value)}`);
  if (seconds <= 0)
    throw new InvalidBlacklistRequest(`Expected a positive number for ${field}, got ${shown(value)}`);
  if (seconds > max)
    throw new InvalidBlacklistRequest(`Expected at most ${max} for ${field}, got ${shown(value)}`);
  return seconds;
}

/** A JSON number, or a string holding a plain decimal number ("60", "-1", "1.5"; not "1e3" or "0x10"). */
function numberFrom(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Whether an error from reading the body is the client's fault (400/413), not the service's. */
export function isClientError(err: unknown): err is InvalidBlacklistRequest | HttpError {
  return err instanceof InvalidBlacklistRequest || err instanceof HttpError;
}
