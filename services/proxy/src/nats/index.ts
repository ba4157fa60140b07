// NATS targets, apart so that main.ts loads the NATS client only when NATS_SERVERS is set.
export { type NatsReply, NatsTarget } from './nats-target.ts';
