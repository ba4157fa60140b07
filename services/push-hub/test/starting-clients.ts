/**
 * Test clients on every transport that connect with extra connect parameters (`rewind`, `since`,
 * `latest`) and keep every event they get, duplicates included (@gatehouse/client would drop them),
 * so a test can count each event id.
 */
import assert from 'node:assert/strict';
import { LongPollClient, openSse, openWs, waitFor } from '@gatehouse/testkit';
import { io } from 'socket.io-client';

export type Transport = 'sse' | 'ws' | 'socketio' | 'longpolling';
export const transports: Transport[] = ['sse', 'ws', 'socketio', 'longpolling'];

export interface StartingClient {
  events(): Array<Record<string, unknown>>;
  close(): void;
}

/** Opens a connection at `base` (http://…) and waits for its welcome. */
export async function openClient(
  base: string,
  transport: Transport,
  subscriptions: unknown[],
  extra: Record<string, string> = {},
): Promise<StartingClient> {
  const query = new URLSearchParams({ subscriptions: JSON.stringify(subscriptions), ...extra });
  const client = await connect(base, transport, subscriptions, extra, query);
  await waitFor(() => client.events().some((e) => e['type'] === 'gw.subscriptions_set'), {
    what: `the ${transport} welcome`,
  });
  return client;
}

async function connect(
  base: string,
  transport: Transport,
  subscriptions: unknown[],
  extra: Record<string, string>,
  query: URLSearchParams,
): Promise<StartingClient> {
  if (transport === 'sse') {
    const sse = await openSse(`${base}/_gw/v1/connection/sse?${query}`);
    assert.equal(sse.status, 200, sse.errorBody);
    return { events: () => sse.events(), close: () => sse.close() };
  }
  if (transport === 'ws') {
    const ws = openWs(`${base.replace('http', 'ws')}/_gw/v1/connection/ws?${query}`);
    return { events: () => ws.events, close: () => ws.ws.terminate() };
  }
  if (transport === 'socketio') {
    const events: Array<Record<string, unknown>> = [];
    const socket = io(base, {
      path: '/_gw/v1/socket.io/',
      auth: { subscriptions, ...extra },
      transports: ['websocket'],
      reconnection: false,
    });
    socket.onAny((_type: string, event: Record<string, unknown>) => events.push(event));
    return { events: () => events, close: () => socket.close() };
  }
  const lp = new LongPollClient(base);
  const created = await lp.get(`?${query}`);
  assert.equal(created.status, 200, created.text);
  const events: Array<Record<string, unknown>> = [];
  let closed = false;
  void (async () => {
    while (!closed) {
      const answer = await lp.get().catch(() => undefined);
      if (answer?.status === 200) events.push(...(answer.body as { events: typeof events }).events);
    }
  })();
  return {
    events: () => events,
    close: () => {
      closed = true;
    },
  };
}

/** The ids of the events of `type` a client got, in order. */
export const idsOf = (c: StartingClient, type: string) =>
  c
    .events()
    .filter((e) => e['type'] === type)
    .map((e) => String(e['id']));
