/**
 * Functions the engine brings along: the actuator endpoints (`/health`, `/info`, `/livenessprobe`,
 * served unless the user's rest.yaml takes those paths; see actuators.ts) and the flow adapter, which answers 501
 * until the flow engine exists.
 */
import { AppException, defineFunction, type FunctionRegistration } from '@gatehouse/functions';
import { type AppIdentity, actuatorFunctions, type HealthDependencies } from './actuators.ts';
import type { FunctionRegistry } from './function-registry.ts';

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
  return [
    ...actuatorFunctions(app, startedAt, dependencies, registry),
    defineFunction({
      route: flowAdapterRoute,
      instances: 100,
      handleEvent: (_headers, request) => {
        const flow = request.getHeader('x-flow-id');
        throw new AppException(
          501,
          `Flow ${flow ?? '(none)'} cannot run: the flow engine is not available in this version`,
        );
      },
    }),
  ];
}

/** Actuator endpoints, added for each path the user's rest.yaml does not declare. */
export const actuatorEndpoints = [
  { service: 'health.actuator.service', methods: ['GET'], url: '/health', timeout: '10s' },
  { service: 'info.actuator.service', methods: ['GET'], url: '/info', timeout: '10s' },
  { service: 'liveness.actuator.service', methods: ['GET'], url: '/livenessprobe', timeout: '10s' },
] as const;
