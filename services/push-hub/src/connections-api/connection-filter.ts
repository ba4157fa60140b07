/**
 * Which connections a connections API request is about: every criterion given must hold (AND).
 * `eventType` is a type the connection subscribes to, by name or through a type pattern (or the
 * pattern itself, as named); `user` the JWT claim JWT_USER_FIELD names.
 */
import type { TransportKind } from '../connections/index.ts';
import { type Subscription, typeFilterOf } from '../subscriptions/index.ts';

export interface ConnectionFilter {
  session?: string;
  user?: string;
  transport?: TransportKind;
  replica?: string;
  eventType?: string;
}

/** What a filter looks at, as every kind of connection has it. */
export interface Filterable {
  transport: TransportKind;
  session: string | undefined;
  user: string | undefined;
  subscriptions: readonly Subscription[];
}

export function passes(filter: ConnectionFilter, c: Filterable): boolean {
  return (
    (filter.transport === undefined || c.transport === filter.transport) &&
    (filter.session === undefined || c.session === filter.session) &&
    (filter.user === undefined || c.user === filter.user) &&
    (filter.eventType === undefined || subscribesTo(c.subscriptions, filter.eventType))
  );
}

function subscribesTo(subscriptions: readonly Subscription[], type: string): boolean {
  return subscriptions.some((s) => s.eventType === type) || typeFilterOf(subscriptions)(type);
}
