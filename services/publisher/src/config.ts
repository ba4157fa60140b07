/** The publisher's settings (environment variables; defaults documented in the README). */
import { accessCheckField } from '@gatehouse/auth';
import { schemaRegistryConfig } from '@gatehouse/avro';
import { bool, corsConfig, duration, int, list, oneOf, optionalStr, str } from '@gatehouse/service-kit';
import { sourceClaimField } from './source-claim.ts';

export const publisherConfig = {
  ...corsConfig,
  ...schemaRegistryConfig,
  SUBMISSION_CHECK: accessCheckField(
    'who may submit on /_gw/v1/events: no_check, jwt_validation, or the URL of a check service',
  ),
  SUBMISSION_SOURCE_CLAIM: sourceClaimField(
    'JSON pointer to the JWT claim naming the sources a token may post on /_gw/v1/events (a string or a list; an entry ending in * is a prefix); needs SUBMISSION_CHECK=jwt_validation; unset: any source',
  ),
  SUBMISSION_CHECK_TIMEOUT: duration('time-out of an external submission check (denies on time-out)', '5s', {
    min: '100ms',
  }),
  MAX_EVENT_BYTES: int('largest accepted event body in bytes (413 beyond)', 1024 * 1024, { min: 1024 }),
  MAX_EVENT_KEYS: int(
    'most object keys and array items, across every level, in a JSON event body (413 beyond, counted on the bytes before parsing)',
    10_000,
    { min: 16 },
  ),
  EVENT_DEDUPE_WINDOW_SECONDS: int(
    'seconds the source and id of an accepted HTTP event are remembered: a copy posted again within them is answered 202 with Gatehouse-Duplicate: true and not published (0: off)',
    120,
    { min: 0, max: 86_400 },
  ),
  FANOUT_TOPIC: str('the fan-out stream every hub replica consumes', 'gw.events'),
  FANOUT_ROUTING: oneOf(
    'interest: each event goes on the fan-out stream with its type as its route (NATS: subject <FANOUT_TOPIC>.~t.<type> of the one stream), so hubs with FANOUT_ROUTING=interest read only the types their clients want; all: unrouted (hubs read everything). Other buses ignore it',
    ['all', 'interest'],
    'all',
  ),
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
