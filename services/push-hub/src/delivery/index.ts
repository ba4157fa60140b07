// The delivery core: the hub, the fan-out consumer, the ring, replays, catch-up, JWT expiry, the drain.
export { drainConnections } from './connection-drain.ts';
export { EventRing, type RingEvent } from './event-ring.ts';
export { consumeFanout } from './fanout-consumer.ts';
export { FanoutInterest } from './fanout-interest.ts';
export { Hub, type HubOptions, type MembershipChange } from './hub.ts';
export { type ReplayTarget, StreamReplay } from './stream-replay.ts';
