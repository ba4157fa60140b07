/**
 * Test clients on every transport that keep what they receive and how they ended, and know their
 * connection id (read from the welcome token with TOKEN_SECRET), so a test can find them in the
 * connections API and watch what a disconnect does to them.
 */
import { SignedTokenCodec } from '@gatehouse/auth';
import { LongPollClient, openSse, openWs, waitFor } from '@gatehouse/testkit';
import { io } from 'socket.io-client';

export interface TestClient {
  transport: 'sse' | 'ws' | 'socketio' | 'longpolling';
  /** The connection id the hub knows it by. */
  id: string;
  /** Every event received, gateway events included. */
  events: Array<Record<string, unknown>>;
  /** Resolves with how the connection ended (WebSocket close code and reason, socket.io reason). */
  ended: Promise<string>;
  close(): void;
}

export interface ConnectParams {
  jwt: string;
  subscriptions: unknown[];
}

/** Reads connection ids out of welcome tokens. */
export function connectionIds(tokenSecret: string) {
  const codec = new SignedTokenCodec(tokenSecret, 'connection');
  return (token: string): string => {
    const address = codec.decode(token) as { id?: string } | undefined;
    if (!address?.id) throw new Error(`not a connection token: ${token}`);
    return address.id;
  };
}

type IdOf = (token: string) => string;

function tokenOf(events: Array<Record<string, unknown>>): string | undefined {
  const welcome = events.find((e) => e['type'] === 'gw.connection.create');
  return (welcome?.['data'] as { connection_token?: string } | undefined)?.connection_token;
}

function query(p: ConnectParams): string {
  return `jwt=${encodeURIComponent(p.jwt)}&subscriptions=${encodeURIComponent(JSON.stringify(p.subscriptions))}`;
}

export async function sseClient(url: string, p: ConnectParams, idOf: IdOf): Promise<TestClient> {
  const sse = await openSse(`${url}/_gw/v1/connection/sse?${query(p)}`);
  if (sse.status !== 200) throw new Error(`SSE connect answered ${sse.status}: ${sse.errorBody}`);
  const token = await waitFor(() => tokenOf(sse.events()), { what: 'the SSE welcome' });
  return {
    transport: 'sse',
    id: idOf(token),
    get events() {
      return sse.events();
    },
    ended: sse.ended.then(() => 'ended'),
    close: () => sse.close(),
  };
}

export async function wsClient(wsUrl: string, p: ConnectParams, idOf: IdOf): Promise<TestClient> {
  const ws = openWs(`${wsUrl}/_gw/v1/connection/ws?${query(p)}`);
  const token = await waitFor(() => tokenOf(ws.events), { what: 'the WebSocket welcome' });
  return {
    transport: 'ws',
    id: idOf(token),
    events: ws.events,
    ended: ws.closed.then(({ code, reason }) => `${code} ${reason}`),
    close: () => ws.ws.terminate(),
  };
}

export async function socketIoClient(url: string, p: ConnectParams, idOf: IdOf): Promise<TestClient> {
  const socket = io(url, {
    path: '/_gw/v1/socket.io/',
    auth: { jwt: p.jwt, subscriptions: p.subscriptions },
    transports: ['websocket'],
    reconnection: false,
  });
  const events: Array<Record<string, unknown>> = [];
  socket.onAny((_type: string, event: Record<string, unknown>) => events.push(event));
  const ended = new Promise<string>((resolve) => socket.on('disconnect', (reason) => resolve(reason)));
  const token = await waitFor(() => tokenOf(events), { what: 'the socket.io welcome' });
  return { transport: 'socketio', id: idOf(token), events, ended, close: () => socket.close() };
}

/**
 * A long-poll client polling in a loop until closed or until its connection ends (an answer that
 * expires its `connection_token` cookie).
 */
export async function longPollClient(url: string, p: ConnectParams, idOf: IdOf): Promise<TestClient> {
  const lp = new LongPollClient(url);
  const created = await lp.get(`?${query(p)}`);
  if (created.status !== 200)
    throw new Error(`long-poll connect answered ${created.status}: ${created.text}`);
  const token = lp.cookies.get('connection_token');
  if (!token) throw new Error('long-poll connect set no connection_token cookie');
  const events: Array<Record<string, unknown>> = [];
  let closed = false;
  const ended = (async () => {
    while (!closed) {
      const answer = await lp.get().catch(() => undefined);
      if (!answer) continue;
      if (answer.status !== 200) throw new Error(`poll answered ${answer.status}: ${answer.text}`);
      events.push(...(answer.body as { events: Array<Record<string, unknown>> }).events);
      if (!lp.cookies.has('connection_token')) return 'ended';
    }
    return 'closed by the test';
  })();
  return {
    transport: 'longpolling',
    id: idOf(token),
    events,
    ended,
    close: () => {
      closed = true;
    },
  };
}
