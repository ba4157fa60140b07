/**
 * The settings every service process of a test topology shares: one fan-out stream, Redis as the
 * store and control channel under a prefix of the run's own, the brokers tools/deps.sh started, and
 * the secrets. Each run's names are its own, so topologies of several tests never meet.
 */
import { dependencyAddress } from './dependencies.ts';

export interface GatewayEnvOptions {
  /** Names the stream and prefixes every key (`<run>-gw-events`, `<run>:`). */
  run: string;
  jwtSecret: string;
  /** The fan-out bus (default kafka). */
  fanout?: 'kafka' | 'redis' | 'nats';
}

export function gatewayEnv({ run, jwtSecret, fanout = 'kafka' }: GatewayEnvOptions): Record<string, string> {
  return {
    FANOUT_BUS: fanout,
    FANOUT_TOPIC: `${run}-gw-events`,
    CONTROL_BUS: 'redis',
    STORE: 'redis',
    STORE_KEY_PREFIX: `${run}:`,
    REDIS_URL: dependencyAddress.redisUrl,
    KAFKA_BROKERS: dependencyAddress.kafkaBrokers.join(','),
    NATS_SERVERS: dependencyAddress.natsUrl,
    JWT_SECRET_KEY: jwtSecret,
    TOKEN_SECRET: `${run}-token-secret`,
  };
}
