export * from './config.ts';
export type * from './connection-tokens.ts';
export * from './hub.ts';
export type * from './hub-auth.ts';
export * from './push-hub-service.ts';
// The public paths, for the public edge's OpenAPI document test (embedded/test/public-edge-document.test.ts).
export { TRANSPORTS } from './connection.ts';
export { LONGPOLL_PATH } from './transports/longpoll-transport.ts';
export { SOCKETIO_PATH } from './transports/socketio-transport.ts';
export { SSE_PATH } from './transports/sse-transport.ts';
export { WS_PATH } from './transports/ws-transport.ts';
