// The delivery core: the hub, the fan-out consumer, the ring, replays, catch-up, JWT expiry, the drain.
export { drainConnections } from './connection-drain.ts';
export { BrokerReadSlots } from './broker-read-slots.ts';
export { type BrokerTailOptions, readBrokerTail } from './broker-tail.ts';
export { EventRing, eventIdentity, type RingEvent } from './event-ring.ts';
export { consumeFanout } from './fanout-consumer.ts';
export { FanoutInterest } from './fanout-interest.ts';
// Latest value on subscribe: the newest event per type and per extractor field value, in the store.
export { type LatestSettings, type LatestValue, LatestValues } from './latest-values.ts';
export { Hub, type HubOptions, type MembershipChange } from './hub.ts';
export { type ReplayTarget, StreamReplay } from './stream-replay.ts';
