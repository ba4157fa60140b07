/**
 * `gatehouse.event.publish`: the bridge from a flow to the frontends. A task puts a CloudEvent on
 * the fan-out stream the push hubs read, so a REST request, a Kafka record or a NATS message a flow
 * handles can end at subscribed browsers (SSE, WebSocket, socket.io, long-polling). Its input:
 *   event          the structured CloudEvent (specversion, id, type, source, data …)
 *   authorization  optional: the producer's Authorization header, for SUBMISSION_CHECK
 * The event meets the rules of `POST /_gw/v1/events` (@gatehouse/event-submission): MAX_EVENT_BYTES
 * and MAX_EVENT_KEYS (413), a valid CloudEvent outside the gateway's namespaces no deeper than
 * MAX_JSON_DEPTH (400), SUBMISSION_CHECK (403); the fan-out stream out of reach is 503. Resolves
 * with the event as published. Unlike the endpoint it keeps no duplicate window (the REST engine
 * has no store): the hubs still drop a copy with a source and id they hold.
 */
import {
  assertSubmissionAllowed,
  type EventLimits,
  publishOnFanout,
  readSubmittedEvent,
  type SubmissionCheck,
} from '@gatehouse/event-submission';
import { AppException, defineFunction, type FunctionRegistration, type TaskBody } from '@gatehouse/functions';
import type { Logger } from '@gatehouse/service-kit';
import type { OutboundBuses } from './outbound-buses.ts';
import type { OutboundMetrics } from './outbound-metrics.ts';
import { flowExceptionOf } from './outbound-failure.ts';

export const eventPublishRoute = 'gatehouse.event.publish';

export interface EventPublishDeps {
  buses: OutboundBuses;
  check: SubmissionCheck;
  limits: EventLimits;
  /** FANOUT_TOPIC and FANOUT_ROUTING=interest. */
  topic: string;
  routed: boolean;
  metrics: OutboundMetrics;
  logger: Logger;
}

export function eventPublishFunction(deps: EventPublishDeps): FunctionRegistration {
  return defineFunction<TaskBody>({
    route: eventPublishRoute,
    input: 'map',
    handleEvent: async (_headers, input) => {
      try {
        const event = readSubmittedEvent(eventJson(input['event']), deps.limits);
        await assertSubmissionAllowed(deps.check, authorizationOf(input['authorization']), event);
        const bus = await deps.buses.fanout();
        const json = await publishOnFanout(
          { bus, topic: deps.topic, routed: deps.routed, component: 'rest-engine' },
          event,
        );
        deps.metrics.count(eventPublishRoute, 200);
        return JSON.parse(json) as unknown;
      } catch (err) {
        const exception = flowExceptionOf(err, eventPublishRoute, deps.logger);
        deps.metrics.count(eventPublishRoute, exception.status);
        throw exception;
      }
    },
  });
}

/** The event as the JSON bytes the events endpoint would have read. */
function eventJson(event: unknown): Buffer {
  if (typeof event !== 'object' || event === null || Array.isArray(event))
    throw new AppException(
      400,
      `${eventPublishRoute} needs an event: a map with specversion, id, type, source`,
    );
  return Buffer.from(JSON.stringify(event));
}

function authorizationOf(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new AppException(400, 'authorization must be text');
  return value;
}
