/**
 * Whether a connection's subscriptions want events of a type, whatever their constraints: a set
 * lookup for the types it names, a pattern test for its patterns (a handful at most,
 * MAX_PATTERNS_PER_CONNECTION). Type patterns never match the gateway's own `gw.…` types: those
 * are subscribed to by name (presence events are asked for as their place is).
 */
import { isTypePattern, typeMatches } from '@gatehouse/cloudevents';
import type { Subscription } from './subscription.ts';

export type TypeFilter = (type: string) => boolean;

export function typeFilterOf(subscriptions: readonly Subscription[]): TypeFilter {
  const types = new Set<string>();
  const patterns: string[] = [];
  for (const s of subscriptions)
    if (isTypePattern(s.eventType)) patterns.push(s.eventType);
    else types.add(s.eventType);
  if (patterns.length === 0) return (type) => types.has(type);
  return (type) => types.has(type) || patternMatches(patterns, type);
}

/** Whether one of `patterns` matches `type` (never a gateway type). */
export function patternMatches(patterns: readonly string[], type: string): boolean {
  return !isGatewayType(type) && patterns.some((p) => typeMatches(p, type));
}

/** The hub's own event types, which patterns do not reach. */
export function isGatewayType(type: string): boolean {
  return type.startsWith('gw.');
}

/** Whether the list names a type pattern. */
export function hasPattern(subscriptions: readonly Subscription[]): boolean {
  return subscriptions.some((s) => isTypePattern(s.eventType));
}
