/**
 * The console's test event: `POST /v3/console/test-event {"type": "…"}` puts one CloudEvent of
 * that type on the fan-out stream — the same bus and form the publisher uses (structured JSON with
 * the publish stamp), so every replica delivers it like any other event — and answers with the
 * connections, cluster-wide, whose subscriptions name that type (or a pattern matching it) when it was published (the
 * connections API's `eventType` filter over the control channel). That list is what the event
 * was routed to; a subscription's data filter may still hold it back, which the list does not see.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Bus, publishedAtHeaders } from '@gatehouse/bus';
import { streamEventHeaders, wildcardTypeProblems } from '@gatehouse/cloudevents';
import { HttpError, Router, readBody, sendJson } from '@gatehouse/service-kit';
import type { ConnectionsCluster } from '../connections-api/index.ts';

export interface TestEventDeps {
  bus: Bus;
  topic: string;
  cluster: ConnectionsCluster;
  replica: string;
  /** CONNECTIONS_API_MAX_LIMIT: the most connections listed. */
  maxLimit: number;
  /** FANOUT_ROUTING=interest: published with its type as its route, as the publisher does then. */
  routed?: boolean;
}

const typePattern = /^[\x21-\x7e]{1,200}$/;

export function createTestEvent(deps: TestEventDeps) {
  async function publish(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const type = readType((await readBody(req, 4096)).toString('utf8'));
    const event = {
      specversion: '1.0',
      id: randomUUID(),
      type,
      source: `gatehouse/console/${deps.replica}`,
      time: new Date().toISOString(),
      datacontenttype: 'application/json',
      data: { test: true },
    };
    // Who subscribes is read first: a connection that the event ends (none should) still counts.
    const reached = await deps.cluster.list({ eventType: type }, undefined, deps.maxLimit);
    await deps.bus.publish(
      deps.topic,
      {
        value: JSON.stringify(event),
        ...(deps.bus.capabilities.headers && {
          headers: { ...publishedAtHeaders(), ...streamEventHeaders(event) },
        }),
      },
      deps.routed ? { route: type } : {},
    );
    sendJson(res, 200, { event: { id: event.id, type }, ...reached });
  }

  const router = new Router().post('/v3/console/test-event', publish);
  return (req: IncomingMessage, res: ServerResponse): Promise<boolean> => router.handle(req, res);
}

function readType(text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'expected a JSON object body');
  }
  const type = (body as { type?: unknown } | null)?.type;
  if (typeof type !== 'string' || !typePattern.test(type))
    throw new HttpError(400, 'type: expected 1 to 200 printable ASCII characters, no spaces');
  const wildcard = wildcardTypeProblems({ type })[0];
  if (wildcard) throw new HttpError(400, wildcard.message);
  return type;
}
