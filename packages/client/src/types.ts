/** A CloudEvent as the gateway delivers it (JSON format). */
export interface CloudEvent {
  specversion: string;
  id: string;
  type: string;
  source: string;
  data?: unknown;
  [attribute: string]: unknown;
}

/** A subscription: an event type, and optionally field constraints (any one of them matches). */
export interface Subscription {
  eventType: string;
  oneOf?: Array<Record<string, unknown>>;
}
