/**
 * A CloudEvent as the gateway delivers it (JSON format), its `data` typed. No index signature, so a
 * misspelt attribute (`event.tpye`) does not compile; extension attributes, which a producer names,
 * are read with `extensionOf`.
 */
export interface CloudEvent<Data = unknown> {
  specversion: string;
  id: string;
  type: string;
  source: string;
  subject?: string;
  time?: string;
  datacontenttype?: string;
  dataschema?: string;
  data?: Data;
}

/**
 * The events a client expects, by type: `Gatehouse<{ 'order.updated': Order }>` hands its `event`
 * listeners a union that TypeScript narrows by `type`, each with its own `data`. Without it, any
 * type with unknown data.
 */
export type EventTypes = Record<string, unknown>;

/** One event of `Types`: for each type, a CloudEvent of that type and data. */
export type TypedCloudEvent<Types extends EventTypes> = {
  [Type in keyof Types & string]: CloudEvent<Types[Type]> & { type: Type };
}[keyof Types & string];

/** An extension attribute of an event (CloudEvents lets producers add their own): undefined when absent. */
export function extensionOf(event: CloudEvent, name: string): unknown {
  return Object.hasOwn(event, name) ? (event as unknown as Record<string, unknown>)[name] : undefined;
}

/**
 * A subscription: an event type or a type pattern (`com.example.orders.*`: one segment,
 * `com.example.orders.>`: one or more; docs/client.md "Type patterns"), and optionally field
 * constraints (any one of them matches).
 */
export interface Subscription {
  eventType: string;
  oneOf?: Array<Record<string, unknown>>;
}

/** A member joined or left a place (the gateway's `gw.presence.joined` and `gw.presence.left`). */
export interface PresenceChange {
  kind: 'joined' | 'left';
  /** The place: an event type, and the constraint object clients subscribe to it with (`{}`: the type). */
  eventType: string;
  where: Record<string, unknown>;
  /** The member's opaque id: the same in every change and in `presence()`. */
  member: string;
  user?: string;
}

/** Who is present in a place, cluster-wide (`Gatehouse.presence`). */
export interface Presence {
  eventType: string;
  where?: Record<string, unknown>;
  /** Connections present. */
  count: number;
  /** Their members (a session, else a user, else a connection), by opaque id and user. */
  members: Array<{ member: string; user?: string }>;
  /** Whether `members` comes from every connection counted (the gateway lists at most 1,000). */
  complete: boolean;
  /** A replica of the gateway did not answer in time: its connections are not counted. */
  partial: boolean;
}

/** What `Gatehouse.history` reads: a place, a page size, a page's start. */
export interface HistoryOptions {
  /** One of the constraint objects clients subscribe to the type with (a room: `{ room: 42 }`). */
  where?: Record<string, unknown>;
  /** Events in the page, 1 to the gateway's HISTORY_MAX_LIMIT (20 when absent). */
  limit?: number;
  /** Only events older than this position (the previous page's `next`). */
  before?: string;
}

/** A page of history, newest first (`Gatehouse.history`). */
export interface HistoryPage {
  eventType: string;
  events: Array<{ position: string; event: CloudEvent }>;
  /** The `before` of the next, older page; absent when nothing older is known. */
  next?: string;
}
