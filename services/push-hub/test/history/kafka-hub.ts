/**
 * One push-hub process with real Kafka as its fan-out stream, no source topics and no buffer
 * warm-up, so that history reads go to the broker: the set-up of the history tests on Kafka.
 */
import { KafkaBus } from '@gatehouse/bus/all';
import { dependencyAddress, gatewayEnv, type ServiceProcess, spawnService } from '@gatehouse/testkit';

/** The hub's environment: `settings` over the common ones. */
export function kafkaHubEnv(
  run: string,
  jwtSecret: string,
  settings: Record<string, string>,
): Record<string, string> {
  return {
    ...gatewayEnv({ run, jwtSecret }),
    KAFKA_SOURCE_TOPICS: '',
    NATS_SOURCE_TOPICS: '',
    EVENT_BUFFER_WARMUP: 'false',
    SHUTDOWN_DRAIN_TIMEOUT_MS: '1000',
    HISTORY_QUERIES_PER_MINUTE: '1000',
    ...settings,
  };
}

export interface KafkaHub {
  kafka: KafkaBus;
  hub: ServiceProcess;
}

/** Makes the fan-out topic (one partition) and starts the hub on it. */
export async function startKafkaHub(run: string, env: Record<string, string>): Promise<KafkaHub> {
  const kafka = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: run });
  try {
    await kafka.ensureTopic(env['FANOUT_TOPIC']!, 1);
    const hub = await spawnService({
      entry: 'services/push-hub/src/main.ts',
      name: 'hub',
      publicPort: true,
      env,
    });
    return { kafka, hub };
  } catch (err) {
    await kafka.close();
    throw err;
  }
}
