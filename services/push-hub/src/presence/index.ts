// Presence: who is present in a place (a type, or one of its constraint objects), cluster-wide,
// and the joins and leaves announced to the clients that subscribe to them.
export { PRESENCE_PATH } from './presence-api.ts';
export { createPresence } from './presence-service.ts';
export { withPresenceExtractors } from './presence-extractors.ts';
export { answerQuery } from './replica-presence.ts';
export { PresenceTracker } from './presence-tracker.ts';
export { readPlace, type Place } from './presence-query.ts';
