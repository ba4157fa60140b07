/**
 * Choosing and connecting a bus from environment settings, the same way in every service's main.ts.
 * Broker addresses follow the reference's names (KAFKA_BROKERS, NATS_SERVERS …).
 */
import { redisConnectionConfig, redisSecurityOptions, type Store } from '@gatehouse/store';
import { type ConfigOf, duration, list, oneOf, optionalStr, str } from '@gatehouse/service-kit';
import { type Bus, BusError } from './bus.ts';
import type { KafkaBus } from './kafka-bus.ts';
import { kafkaTlsRefusal } from './kafka-tls-probe.ts';
import { kafkaSecurityConfig, kafkaSecurityOptions } from './kafka-security.ts';
import { MemoryBus } from './memory-bus.ts';
import { natsSecurityConfig, natsSecurityOptions } from './nats-security.ts';

export const busKinds = ['memory', 'kafka', 'redis', 'nats', 'kinesis'] as const;
export type BusKind = (typeof busKinds)[number];

export const busConfig = {
  KAFKA_BROKERS: list('Kafka bootstrap servers host:port,… (empty: Kafka is off)'),
  KAFKA_CLIENT_ID: str('Kafka client id', 'gatehouse'),
  KAFKA_EPOCH_CHECK_INTERVAL: duration(
    "how often a Kafka broadcast subscription asks for its topic's id: a topic deleted and created anew is read from its start, in its new epoch, at most this long after",
    '10s',
    { min: '100ms' },
  ),
  ...kafkaSecurityConfig,
  ...redisConnectionConfig,
  NATS_SERVERS: list('NATS servers nats://host:port,… (tls://host:port for TLS; empty: NATS is off)'),
  ...natsSecurityConfig,
  KINESIS_ENDPOINT: optionalStr('Kinesis endpoint (an emulator); unset: AWS itself'),
  KINESIS_AWS_REGION: str('Kinesis region', 'eu-west-1'),
  FANOUT_BUS: oneOf('transport of the fan-out stream gw.events', busKinds, 'redis'),
  CONTROL_BUS: oneOf('transport of requests between replicas', busKinds, 'redis'),
};

export type BusConfig = ConfigOf<typeof busConfig>;

/**
 * Connects a bus of the given kind; rejects with a clear message when its settings are missing.
 * Each adapter is imported here, when asked for: a process never loads the client library of a
 * broker it does not use (kafkajs alone is some 200 modules).
 */
/** How a consumer batches its reads, where the bus has such a thing (Kafka's fetches). */
export interface FetchSettings {
  /** The broker answers a fetch once it holds this many bytes for it … */
  minBytes: number;
  /** … or after this long. */
  maxWaitMs: number;
}

export async function connectBus(
  kind: BusKind,
  config: BusConfig,
  extra: { leaseStore?: Store; fetch?: FetchSettings } = {},
): Promise<Bus> {
  switch (kind) {
    case 'memory':
      return new MemoryBus();
    case 'redis': {
      const { RedisBus } = await import('./redis-bus.ts');
      return RedisBus.connect({
        url: config.REDIS_URL,
        cluster: config.REDIS_CLUSTER,
        redis: redisSecurityOptions(config),
        keyPrefix: config.STORE_KEY_PREFIX,
      });
    }
    case 'nats': {
      if (config.NATS_SERVERS.length === 0) throw new Error('NATS_SERVERS must be set to use NATS');
      const { NatsBus } = await import('./nats-bus.ts');
      return NatsBus.connect({
        servers: config.NATS_SERVERS,
        name: config.KAFKA_CLIENT_ID,
        security: natsSecurityOptions(config),
      });
    }
    case 'kafka':
      if (config.KAFKA_BROKERS.length === 0) throw new Error('KAFKA_BROKERS must be set to use Kafka');
      return connectKafka(config, extra.fetch);
    case 'kinesis': {
      const { KinesisBus } = await import('./kinesis-bus.ts');
      return new KinesisBus({
        region: config.KINESIS_AWS_REGION,
        ...(config.KINESIS_ENDPOINT ? { endpoint: config.KINESIS_ENDPOINT, createStreams: true } : {}),
        ...(extra.leaseStore ? { leaseStore: extra.leaseStore } : {}),
      });
    }
  }
}

/** A Kafka bus, after a TLS handshake with the first broker when TLS is on (kafka-tls-probe.ts). */
async function connectKafka(config: BusConfig, fetch: FetchSettings | undefined): Promise<KafkaBus> {
  const security = kafkaSecurityOptions(config);
  const { KafkaBus } = await import('./kafka-bus.ts');
  if (security.ssl !== undefined) {
    const refusal = await kafkaTlsRefusal(config.KAFKA_BROKERS[0]!, security.ssl, security.socketFactory);
    if (refusal !== undefined) throw new BusError(refusal);
  }
  return new KafkaBus({
    brokers: config.KAFKA_BROKERS,
    clientId: config.KAFKA_CLIENT_ID,
    epochCheckMs: config.KAFKA_EPOCH_CHECK_INTERVAL,
    ...security,
    ...(fetch && { fetchMinBytes: fetch.minBytes, maxWaitTimeMs: fetch.maxWaitMs }),
  });
}
