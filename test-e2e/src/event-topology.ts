/**
 * The event-delivery half of the full topology, as separate processes on the real brokers: two
 * publishers and two push-hub replicas meeting on a Kafka fan-out stream, Redis for the control
 * channel and the store, Kafka and NATS source topics.
 */
import { signJwt, withExpiry } from '@gatehouse/auth';
import {
  dependencyAddress,
  freePort,
  gatewayEnv,
  type ServiceProcess,
  spawnService,
  uniqueName,
} from '@gatehouse/testkit';

export const jwtSecret = 'e2e-jwt-secret-that-is-long-enough-for-hs256';

export interface EventTopology {
  publishers: ServiceProcess[];
  hubs: ServiceProcess[];
  kafkaSourceTopic: string;
  natsSourceSubject: string;
  kinesisSourceStream: string;
  fanoutTopic: string;
  jwt(claims: Record<string, unknown>): string;
  stop(): Promise<void>;
}

/**
 * `tls`: each hub also serves HTTPS and HTTP/2 with this certificate, on a port of its own
 * (`INBOUND_HTTPS_PORT` in the hub's env).
 */
export async function startEventTopology(
  hubEnv: Record<string, string> = {},
  options: { tls?: { certFile: string; keyFile: string } } = {},
): Promise<EventTopology> {
  const run = uniqueName('e2e');
  const kafkaSourceTopic = `${run}-kafka-source`;
  const natsSourceSubject = `${run}-nats-source`;
  const kinesisSourceStream = `${run}-kinesis-source`;
  const fanoutTopic = `${run}-gw-events`;
  const shared = {
    ...gatewayEnv({ run, jwtSecret }),
    EXTRACTORS: JSON.stringify({
      greeting: {
        name: {
          stable_field_index: 0,
          event: { json_pointer: '/data/name' },
          jwt: { json_pointer: '/username' },
        },
      },
    }),
  };
  const publisherEnv = {
    ...shared,
    KAFKA_SOURCE_TOPICS: kafkaSourceTopic,
    KAFKATOFILTER_KAFKA_GROUP_ID: `${run}-kafka-to-filter`,
    NATS_SERVERS: dependencyAddress.natsUrl,
    NATS_SOURCE_TOPICS: natsSourceSubject,
    NATSTOFILTER_QUEUE_GROUP: `${run}-nats-to-filter`,
    KINESIS_ENABLED: 'true',
    KINESIS_ENDPOINT: dependencyAddress.kinesisEndpoint,
    KINESIS_AWS_REGION: 'eu-west-1',
    KINESIS_STREAM: kinesisSourceStream,
    KINESIS_APP_NAME: `${run}-kinesis-to-filter`,
  };
  const publishers = await Promise.all(
    ['a', 'b'].map((r) =>
      spawnService({
        entry: 'services/publisher/src/main.ts',
        name: `publisher-${r}`,
        publicPort: true,
        env: publisherEnv,
        readyTimeoutMs: 60_000,
      }),
    ),
  );
  const hubs = await Promise.all(
    ['a', 'b'].map(async (r) =>
      spawnService({
        entry: 'services/push-hub/src/main.ts',
        name: `hub-${r}`,
        publicPort: true,
        env: { ...shared, REPLICA_ID: `${run}-hub-${r}`, ...(await tlsEnv(options.tls)), ...hubEnv },
        readyTimeoutMs: 60_000,
      }),
    ),
  );
  return {
    publishers,
    hubs,
    kafkaSourceTopic,
    natsSourceSubject,
    kinesisSourceStream,
    fanoutTopic,
    jwt: (claims) => signJwt(withExpiry(claims), { alg: 'HS256', key: jwtSecret }),
    async stop() {
      await Promise.all([...hubs, ...publishers].map((p) => p.stop()));
    },
  };
}

async function tlsEnv(
  tls: { certFile: string; keyFile: string } | undefined,
): Promise<Record<string, string>> {
  if (!tls) return {};
  return {
    HTTPS_CERTFILE: tls.certFile,
    HTTPS_KEYFILE: tls.keyFile,
    INBOUND_HTTPS_PORT: String(await freePort()),
  };
}

export async function postEvent(
  publisher: ServiceProcess,
  event: Record<string, unknown>,
): Promise<Response> {
  return fetch(`${publisher.publicUrl}/_gw/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/cloudevents+json' },
    body: JSON.stringify({ specversion: '1.0', id: crypto.randomUUID(), source: 'e2e', ...event }),
  });
}
