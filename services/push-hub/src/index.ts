export * from './config.ts';
export type { BearerTokens, ConnectionAddress, ConnectionTokens, HubAuth } from './auth/index.ts';
export { Hub, type HubOptions } from './delivery/index.ts';
// The fan-out path in one process, for bench/src/unwanted-events.bench.ts.
export { consumeFanout, EventRing } from './delivery/index.ts';
export { HubMetrics } from './metrics/index.ts';
// The matching path alone, for bench/src/type-patterns.bench.ts.
export { parseExtractorConfig } from './subscriptions/index.ts';
export { SubscriptionIndex } from './subscriptions/index.ts';
export * from './push-hub-service.ts';
// The public paths, for the public edge's OpenAPI document test (embedded/test/public-edge-document.test.ts).
export { TRANSPORTS } from './connections/index.ts';
export { LONGPOLL_PATH, SOCKETIO_PATH, SSE_PATH, WS_PATH } from './transports/index.ts';
export { answerQuery, PRESENCE_PATH, PresenceTracker } from './presence/index.ts';
export { HISTORY_PATH } from './history/index.ts';
export { ACK_PATH } from './acks/index.ts';
// History pages in one process, for bench/src/history.bench.ts.
export { readHistory } from './history/index.ts';
export { BrokerReadSlots } from './delivery/index.ts';
