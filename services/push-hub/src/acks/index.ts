// Acknowledged at-least-once delivery: ack sessions, their positions in the store, the ack endpoint
// and the redelivery watch.
export { ACK_PATH, createAckEndpoint } from './ack-endpoint.ts';
export { AckMetrics } from './ack-metrics.ts';
export { AckPositions, type AckStream } from './ack-positions.ts';
export { ackStreamOf } from './ack-stream.ts';
export { type AckSession, ackSessionNameProblem } from './ack-session.ts';
export { type AckStart, type AckWelcome, createAckStart, type ReadAckStart, welcomeOf } from './ack-start.ts';
export { AckWatch } from './ack-watch.ts';
export { type LongPollAck, LongPollAcks } from './longpoll-acks.ts';
