// A frontend connection, whatever its transport: what the hub sends it and what it keeps of it.
export type { ConnectionAbout, ConnectionFacts } from './connection-facts.ts';
export { type CloseReason, type Connection, type TransportKind, TRANSPORTS } from './connection.ts';
export {
  connectionClosed,
  connectionCreated,
  type OutgoingEvent,
  type PresenceEventData,
  presenceChanged,
  resyncRequired,
  sessionExpired,
  sessionKilled,
  subscriptionsChanged,
  subscriptionsSet,
} from './gateway-events.ts';
export { type ResyncReason, resyncReasonOf } from './resync-reason.ts';
