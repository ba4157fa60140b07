// SSE, WebSocket, socket.io and long-polling: each transport's connects, wire format and output.
export { subscriptionsPreflight } from './cors.ts';
export type { LongPollSighting, LongPollSightings } from './longpoll-sightings.ts';
export { createLongPollTransport, LONGPOLL_PATH, type LongPollRecord } from './longpoll-transport.ts';
export { createSocketIoTransport, SOCKETIO_PATH } from './socketio-transport.ts';
export { createSseTransport, SSE_PATH } from './sse-transport.ts';
export type { TransportContext } from './transport-context.ts';
export { createWsTransport, WS_PATH } from './ws-transport.ts';
