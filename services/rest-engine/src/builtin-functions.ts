/**
 * Functions the engine brings along: the actuator endpoints (`/health`, `/info`, `/livenessprobe`,
 * served unless the user's rest.yaml takes those paths). The flow adapter is no function: the request
 * pipeline runs the endpoint's flow itself (flow-adapter.ts).
 */
import { defineFunction, type FunctionRegistration } from '@gatehouse/functions';

export interface AppIdentity {
  name: string;
  version: string;
  description: string;
  /** Id of this engine instance, also the `origin` of trace records. */
  origin: string;
}

/** The `service` of endpoints that run a flow (`flow: <id>`). */
export const flowAdapterRoute = 'http.flow.adapter';
/** The built-in response writer: an endpoint cannot name it, trace records do. */
export const responseRoute = 'async.http.response';
/** The built-in HTTP relay client, primary of `service: http://…` endpoints. */
export const relayRoute = 'async.http.request';

export function builtinFunctions(app: AppIdentity, startedAt: Date): FunctionRegistration[] {
  return [
    defineFunction({
      route: 'health.actuator.service',
      instances: 10,
      handleEvent: () => ({ status: 'UP', origin: app.origin, name: app.name }),
    }),
    defineFunction({
      route: 'info.actuator.service',
      instances: 10,
      handleEvent: () => ({
        app: { name: app.name, version: app.version, description: app.description },
        origin: app.origin,
        node: process.version,
        started: startedAt.toISOString(),
        uptime_seconds: Math.round(process.uptime()),
      }),
    }),
    defineFunction({ route: 'liveness.actuator.service', instances: 10, handleEvent: () => 'OK' }),
  ];
}

/** Actuator endpoints, added for each path the user's rest.yaml does not declare. */
export const actuatorEndpoints = [
  { service: 'health.actuator.service', methods: ['GET'], url: '/health', timeout: '10s' },
  { service: 'info.actuator.service', methods: ['GET'], url: '/info', timeout: '10s' },
  { service: 'liveness.actuator.service', methods: ['GET'], url: '/livenessprobe', timeout: '10s' },
] as const;
