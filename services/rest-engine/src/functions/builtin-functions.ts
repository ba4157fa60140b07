/**
 * Functions the engine brings along: the actuator endpoints (`/health`, `/info`, `/livenessprobe`,
 * served unless the user's rest.yaml takes those paths; see actuators.ts). The flow adapter is no
 * function: the request pipeline's flow target runs the endpoint's flow (pipeline/targets/flow-target.ts).
 */
import type { FunctionRegistration } from '@gatehouse/functions';
import { type AppIdentity, actuatorFunctions, type HealthDependencies } from './actuators.ts';
import type { FunctionRegistry } from './function-registry.ts';

/** The `service` of endpoints that run a flow (`flow: <id>`). */
export const flowAdapterRoute = 'http.flow.adapter';
/** The built-in response writer: an endpoint cannot name it, trace records do. */
export const responseRoute = 'async.http.response';
/** The built-in HTTP relay client, primary of `service: http://…` endpoints. */
export const relayRoute = 'async.http.request';

export function builtinFunctions(
  app: AppIdentity,
  startedAt: Date,
  dependencies: HealthDependencies,
  registry: FunctionRegistry,
): FunctionRegistration[] {
  return actuatorFunctions(app, startedAt, dependencies, registry);
}

/** Actuator endpoints, added for each path the user's rest.yaml does not declare. */
export const actuatorEndpoints = [
  { service: 'health.actuator.service', methods: ['GET'], url: '/health', timeout: '10s' },
  { service: 'info.actuator.service', methods: ['GET'], url: '/info', timeout: '10s' },
  { service: 'liveness.actuator.service', methods: ['GET'], url: '/livenessprobe', timeout: '10s' },
] as const;
