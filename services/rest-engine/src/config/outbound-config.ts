/**
 * The REST engine's settings for flows that publish (outbound/): the buses and the schema registry
 * from the environment variables every service reads (KAFKA_BROKERS, NATS_SERVERS, FANOUT_BUS,
 * KAFKA_SCHEMA_REGISTRY_HOST …), the publisher's rules for events to frontends (SUBMISSION_CHECK,
 * MAX_EVENT_BYTES …, from @gatehouse/event-submission) and the bounds of one notification.
 * Unlike the engine's other settings (application.yml) these are environment variables only: a
 * deployment sets them once for every service.
 */
import { schemaRegistryConfig } from '@gatehouse/avro';
import { busConfig } from '@gatehouse/bus';
import { submissionConfig } from '@gatehouse/event-submission';
import { type ConfigOf, int, list, loadConfig } from '@gatehouse/service-kit';

export const outboundConfig = {
  ...busConfig,
  ...schemaRegistryConfig,
  ...submissionConfig,
  // Where flows may publish (outbound/notification-destinations.ts applies them).
  FLOW_NOTIFICATION_TOPICS: list(
    "topics and subjects a flow's kafka.notification and nats.notification may publish to: names, name* for a prefix, * for any (comma list); unset: none. The fan-out stream, gw and gw.…, and names starting with _ or $ are refused whatever it says",
  ),
  FLOW_NOTIFICATION_MAX_TOPICS: int(
    'most distinct topics and subjects a process publishes to through a FLOW_NOTIFICATION_TOPICS prefix entry or * (each a new stream or topic on the broker); a new one beyond is refused (403)',
    1000,
    { min: 1, max: 1_000_000 },
  ),
  FLOW_NOTIFICATION_MAX_BYTES: int(
    "largest record a flow's kafka.notification or nats.notification may publish, body and headers together, in bytes (413 beyond)",
    1024 * 1024,
    { min: 1024, max: 64 * 1024 * 1024 },
  ),
  FLOW_NOTIFICATION_MAX_HEADERS: int(
    "most headers of a record a flow's kafka.notification or nats.notification publishes (413 beyond)",
    64,
    { min: 0, max: 10_000 },
  ),
};

export type OutboundConfig = ConfigOf<typeof outboundConfig>;

/** Throws a ConfigError naming every bad setting. */
export function loadOutboundConfig(env: NodeJS.ProcessEnv): OutboundConfig {
  return loadConfig(outboundConfig, env);
}
