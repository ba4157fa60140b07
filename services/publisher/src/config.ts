/** The publisher's settings (environment variables; defaults documented in the README). */
import { schemaRegistryConfig } from '@gatehouse/avro';
import { eventBoundsConfig, fanoutConfig, submissionCheckConfig } from '@gatehouse/event-submission';
import { bool, corsConfig, int, list, optionalStr, str } from '@gatehouse/service-kit';

export const publisherConfig = {
  ...corsConfig,
  ...schemaRegistryConfig,
  ...submissionCheckConfig,
  ...eventBoundsConfig,
  EVENT_DEDUPE_WINDOW_SECONDS: int(
    'seconds the source and id of an accepted HTTP event are remembered: a copy posted again within them is answered 202 with Gatehouse-Duplicate: true and not published (0: off)',
    120,
    { min: 0, max: 86_400 },
  ),
  ...fanoutConfig,
  KAFKA_SOURCE_TOPICS: list('Kafka topics whose events go to frontends (needs KAFKA_BROKERS)', ['gw']),
  KAFKATOFILTER_KAFKA_GROUP_ID: str(
    'consumer group of the Kafka source topics, the same on every replica',
    'gw-kafka-to-filter',
  ),
  NATS_SOURCE_TOPICS: list('NATS subjects whose events go to frontends (needs NATS_SERVERS)', ['gw']),
  NATSTOFILTER_QUEUE_GROUP: str(
    'queue group of the NATS source subjects, the same on every replica',
    'gw-nats-to-filter',
  ),
  KINESIS_ENABLED: bool('consume the Kinesis stream KINESIS_STREAM', false),
  KINESIS_STREAM: str('Kinesis stream whose events go to frontends', 'gw-outbound'),
  KINESIS_APP_NAME: str(
    'consumer group (lease namespace) of the Kinesis source, the same on every replica',
    'gw-kinesis-to-filter',
  ),
  WRAPPED_EVENT_TYPE: optionalStr(
    'type of the CloudEvent a non-CloudEvent source message is wrapped into; unset: the topic name',
  ),
};
