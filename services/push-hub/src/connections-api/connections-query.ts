/**
 * Reading the connections API's input: the list's query string (filters, `limit`, `cursor`), the
 * disconnect's reason and reconnect advice, and the `POST …/disconnect` body. Every problem is a
 * 400 naming the parameter; an unknown parameter is one too (a misspelt filter would otherwise
 * list, or disconnect, more than meant).
 */
import { HttpError } from '@gatehouse/service-kit';
import { TRANSPORTS, type TransportKind } from '../connections/index.ts';
import type { ConnectionFilter } from './connection-filter.ts';
import { BadCursorError, decodeCursor } from './connections-cursor.ts';
import type { DisconnectTarget } from './connections-messages.ts';

/** The page size when `limit` is not given (at most the configured maximum). */
export const defaultPageSize = 100;
/** Longest filter value, reason and session or user name accepted. */
const maxValueLength = 1024;
const maxReasonLength = 256;
export const defaultReason = 'disconnected by the operator';

export interface ListQuery {
  filter: ConnectionFilter;
  limit: number;
  after: string | undefined;
}

export interface DisconnectOrder {
  reason: string;
  reconnect: boolean;
}

const filterNames = ['session', 'user', 'transport', 'replica', 'eventType'] as const;

export function readListQuery(url: string | undefined, maxLimit: number): ListQuery {
  const params = queryOf(url, [...filterNames, 'limit', 'cursor']);
  const filter: ConnectionFilter = {};
  for (const name of filterNames) {
    const value = text(params, name, maxValueLength);
    if (value === undefined) continue;
    if (name === 'transport') filter.transport = transportOf(value);
    else filter[name] = value;
  }
  const cursor = params.get('cursor');
  return {
    filter,
    limit: limitOf(params.get('limit'), maxLimit),
    after: cursor === null ? undefined : afterOf(cursor),
  };
}

/** `DELETE /v3/connections/{id}?reason=…&reconnect=…` */
export function readDisconnectQuery(url: string | undefined): DisconnectOrder {
  const params = queryOf(url, ['reason', 'reconnect']);
  const reconnect = params.get('reconnect');
  if (reconnect !== null && reconnect !== 'true' && reconnect !== 'false')
    throw bad(`reconnect: expected true or false, got ${shown(reconnect)}`);
  return {
    reason: text(params, 'reason', maxReasonLength) ?? defaultReason,
    reconnect: reconnect === 'true',
  };
}

/** `POST /v3/connections/disconnect` `{"session"|"user": …, "reason"?, "reconnect"?}` */
export function readDisconnectBody(body: unknown): DisconnectOrder & { target: DisconnectTarget } {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw bad('expected a JSON object with "session" or "user", and optionally "reason" and "reconnect"');
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((k) => !['session', 'user', 'reason', 'reconnect'].includes(k));
  if (unknown.length > 0)
    throw bad(`unknown field ${shown(unknown[0])}; known: session, user, reason, reconnect`);
  if ((fields['session'] === undefined) === (fields['user'] === undefined))
    throw bad('give exactly one of "session" and "user"');
  const name = fields['session'] === undefined ? 'user' : 'session';
  const value = stringField(fields, name, maxValueLength)!;
  const reconnect = fields['reconnect'];
  if (reconnect !== undefined && typeof reconnect !== 'boolean')
    throw bad(`reconnect: expected true or false, got ${shown(reconnect)}`);
  const target: DisconnectTarget = name === 'session' ? { session: value } : { user: value };
  return {
    target,
    reason: stringField(fields, 'reason', maxReasonLength) ?? defaultReason,
    reconnect: reconnect === true,
  };
}

/**
 * `POST /v3/connections/subscriptions` `{"session"|"user": …, "subscriptions": […]}`, decoded
 * already (readSubscriptionsJson: the field is there); the list itself is checked by the caller.
 */
export function readSubscribeBody(fields: Record<string, unknown>): { target: DisconnectTarget } {
  const unknown = Object.keys(fields).filter((k) => !['session', 'user', 'subscriptions'].includes(k));
  if (unknown.length > 0)
    throw bad(`unknown field ${shown(unknown[0])}; known: session, user, subscriptions`);
  if ((fields['session'] === undefined) === (fields['user'] === undefined))
    throw bad('give exactly one of "session" and "user"');
  const name = fields['session'] === undefined ? 'user' : 'session';
  const value = stringField(fields, name, maxValueLength)!;
  return { target: name === 'session' ? { session: value } : { user: value } };
}

function queryOf(url: string | undefined, known: readonly string[]): URLSearchParams {
  const params = new URL(url ?? '/', 'http://local').searchParams;
  for (const name of new Set(params.keys())) {
    if (!known.includes(name))
      throw bad(`unknown query parameter ${shown(name)}; known: ${known.join(', ')}`);
    if (params.getAll(name).length > 1) throw bad(`${name}: given more than once`);
  }
  return params;
}

function text(params: URLSearchParams, name: string, max: number): string | undefined {
  const value = params.get(name);
  if (value === null) return undefined;
  if (value === '' || value.length > max) throw bad(`${name}: expected 1 to ${max} characters`);
  return value;
}

function stringField(fields: Record<string, unknown>, name: string, max: number): string | undefined {
  const value = fields[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '' || value.length > max)
    throw bad(`${name}: expected a string of 1 to ${max} characters, got ${shown(value)}`);
  return value;
}

function transportOf(value: string): TransportKind {
  if (!(TRANSPORTS as readonly string[]).includes(value))
    throw bad(`transport: expected one of ${TRANSPORTS.join(', ')}, got ${shown(value)}`);
  return value as TransportKind;
}

function limitOf(value: string | null, max: number): number {
  if (value === null) return Math.min(defaultPageSize, max);
  const n = /^\d{1,9}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 1 && n <= max))
    throw bad(`limit: expected a whole number from 1 to ${max}, got ${shown(value)}`);
  return n;
}

function afterOf(cursor: string): string {
  try {
    return decodeCursor(cursor);
  } catch (err) {
    if (err instanceof BadCursorError) throw bad(err.message);
    throw err;
  }
}

const bad = (message: string) => new HttpError(400, message);

function shown(value: unknown): string {
  const t = JSON.stringify(value) ?? String(value);
  return t.length > 80 ? `${t.slice(0, 77)}...` : t;
}
