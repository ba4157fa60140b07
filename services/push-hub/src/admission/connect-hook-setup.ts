/** The connect hook as the settings make it (CONNECT_CHECK_*); undefined when CONNECT_CHECK is unset. */
import type { ConfigOf, Logger, Registry } from '@gatehouse/service-kit';
import type { pushHubConfig } from '../config.ts';
import { ConnectHookMetrics } from '../metrics/index.ts';
import type { Subscription, SubscriptionBounds } from '../subscriptions/index.ts';
import { CircuitBreaker } from './circuit-breaker.ts';
import { type ConnectHook, createConnectHook } from './connect-hook.ts';

export function connectHookFrom(
  config: ConfigOf<typeof pushHubConfig>,
  deps: {
    registry: Registry;
    logger: Logger;
    bounds: SubscriptionBounds;
    maxJsonDepth: number;
    validate(subs: Subscription[]): void;
  },
): ConnectHook | undefined {
  if (config.CONNECT_CHECK === undefined) return undefined;
  return createConnectHook({
    url: config.CONNECT_CHECK,
    timeoutMs: config.CONNECT_CHECK_TIMEOUT,
    headers: config.CONNECT_CHECK_HEADERS,
    maxResponseBytes: config.CONNECT_CHECK_MAX_RESPONSE_BYTES,
    maxInFlight: config.CONNECT_CHECK_MAX_IN_FLIGHT,
    breaker: new CircuitBreaker({
      failures: config.CONNECT_CHECK_BREAKER_FAILURES,
      coolDownMs: config.CONNECT_CHECK_BREAKER_COOLDOWN,
    }),
    rules: {
      maxDataBytes: config.CONNECT_CHECK_MAX_DATA_BYTES,
      maxJsonDepth: deps.maxJsonDepth,
      bounds: deps.bounds,
      validate: deps.validate,
    },
    metrics: new ConnectHookMetrics(deps.registry),
    logger: deps.logger,
  });
}
