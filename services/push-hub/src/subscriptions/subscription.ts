/**
 * A subscription: an event type plus optional constraints. `oneOf` is an OR over objects, each
 * object an AND over its fields; no (or an empty) `oneOf` matches every event of the type.
 * Accepted aliases as in the reference: `eventType`/`event_type`, `oneOf`/`one_of`/`constraints`.
 */

import { exceedsJsonDepth, JsonTooDeepError, maxJsonDepthCeiling } from '@gatehouse/service-kit';

export type Constraint = Record<string, unknown>;

export interface Subscription {
  eventType: string;
  oneOf: Constraint[];
}

export class InvalidSubscriptionError extends Error {
  override readonly name = 'InvalidSubscriptionError';
}

/**
 * Parses the `subscriptions` query parameter or body field: a JSON text or an already decoded list,
 * nested at most `maxDepth` levels (MAX_JSON_DEPTH).
 */
export function parseSubscriptions(input: unknown, maxDepth: number): Subscription[] {
  let list = input;
  if (typeof input === 'string') {
    try {
      list = JSON.parse(input);
    } catch (err) {
      throw new InvalidSubscriptionError(`failed to decode subscription list: ${(err as Error).message}`);
    }
  }
  if (exceedsJsonDepth(list, maxDepth))
    throw new InvalidSubscriptionError(new JsonTooDeepError('the subscription list', maxDepth).message);
  if (!Array.isArray(list)) throw new InvalidSubscriptionError('subscriptions must be a JSON list');
  return list.map((item, i) => parseSubscription(item, i));
}

function parseSubscription(item: unknown, index: number): Subscription {
  const where = `subscription ${index}`;
  if (item === null || typeof item !== 'object' || Array.isArray(item)) {
    throw new InvalidSubscriptionError(`${where} must be an object`);
  }
  const obj = item as Record<string, unknown>;
  const eventType = obj['eventType'] ?? obj['event_type'];
  if (typeof eventType !== 'string' || eventType === '') {
    throw new InvalidSubscriptionError(`${where}: eventType must be a non-empty string`);
  }
  const rawOneOf = obj['oneOf'] ?? obj['one_of'] ?? obj['constraints'] ?? [];
  if (!Array.isArray(rawOneOf))
    throw new InvalidSubscriptionError(`${where}: oneOf must be a list of objects`);
  const oneOf = rawOneOf.map((c, j) => {
    if (c === null || typeof c !== 'object' || Array.isArray(c)) {
      throw new InvalidSubscriptionError(`${where}: oneOf[${j}] must be an object`);
    }
    for (const key of Object.keys(c)) {
      if (key === '') throw new InvalidSubscriptionError(`${where}: oneOf[${j}] has an empty field name`);
    }
    return c as Constraint;
  });
  return { eventType, oneOf };
}

/**
 * Removes exact duplicates (the union of JWT-inferred and manual subscriptions may repeat). One
 * too deep to compare is kept: validation refuses it.
 */
export function uniqueSubscriptions(subs: Subscription[]): Subscription[] {
  // A list of one (most connects) has no duplicate: no canonical text to make for it.
  if (subs.length < 2) return subs;
  const seen = new Set<string>();
  return subs.filter((s) => {
    const key = canonicalJson(s);
    if (key === undefined) return true;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * JSON with object keys sorted, so equal values compare equal as text; undefined for a value that
 * nests objects and arrays deeper than `maxDepth`. The walk is recursive, so it is bounded: by
 * default at the highest MAX_JSON_DEPTH, deeper than any constraint a subscription can hold, so a
 * value beyond it (an event's field nested thousands of levels) equals no constraint.
 */
export function canonicalJson(value: unknown, maxDepth = maxJsonDepthCeiling): string | undefined {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (maxDepth === 0) return undefined;
  const parts: string[] = [];
  if (Array.isArray(value)) {
    for (const item of value) {
      const text = canonicalJson(item, maxDepth - 1);
      if (text === undefined) return undefined;
      parts.push(text);
    }
    return `[${parts.join(',')}]`;
  }
  const obj = value as Record<string, unknown>;
  for (const key of Object.keys(obj).sort()) {
    const text = canonicalJson(obj[key], maxDepth - 1);
    if (text === undefined) return undefined;
    parts.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${parts.join(',')}}`;
}
