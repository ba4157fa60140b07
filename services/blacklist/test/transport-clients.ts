/**
 * Real clients of a push hub, one per transport, that report how and when the server ended the
 * connection: the blacklist tests hold a session open on every transport of every replica and
 * check that each one ends with the kill, in time. `tryConnect` tells whether a token is let in.
 */
import { once } from 'node:events';
import { openSse, waitFor } from '@gatehouse/testkit';
import { io } from 'socket.io-client';
import WebSocket from 'ws';

export type Transport = 'sse' | 'ws' | 'socketio-websocket' | 'socketio-polling' | 'longpolling';
export const transports: Transport[] = ['sse', 'ws', 'socketio-websocket', 'socketio-polling', 'longpolling'];

export interface ConnectionEnd {
  /** performance.now() when the end was seen. */
  at: number;
  /** Type of the last event the connection received before it ended. */
  lastEvent: string | undefined;
  /** How it ended, in transport terms. */
  how: string;
}

export interface WatchedConnection {
  transport: Transport;
  ended: Promise<ConnectionEnd>;
  hasEnded(): boolean;
  close(): void;
}

const welcomeEvents = 2;

/** `retryUnavailable`: a long poll answered 503 (the hub's store is down) polls again after Retry-After. */
export async function connect(
  transport: Transport,
  hubUrl: string,
  jwt: string,
  options: { retryUnavailable?: boolean } = {},
): Promise<WatchedConnection> {
  switch (transport) {
    case 'sse':
      return sse(hubUrl, jwt);
    case 'ws':
      return ws(hubUrl, jwt);
    case 'socketio-websocket':
      return socketIo(hubUrl, jwt, 'websocket');
    case 'socketio-polling':
      return socketIo(hubUrl, jwt, 'polling');
    case 'longpolling':
      return longPolling(hubUrl, jwt, options.retryUnavailable ?? false);
  }
}

/** Connects and closes again: `accepted`, or the server's refusal (status or close code, and reason). */
export async function tryConnect(
  transport: Transport,
  hubUrl: string,
  jwt: string,
): Promise<{ accepted: boolean; answer: string }> {
  try {
    const conn = await connect(transport, hubUrl, jwt);
    conn.close();
    return { accepted: true, answer: 'accepted' };
  } catch (err) {
    if (err instanceof Refused) return { accepted: false, answer: err.message };
    throw err;
  }
}

/** The server turned the connection down (as opposed to a test or network failure). */
export class Refused extends Error {}

function tracked(transport: Transport, ended: Promise<ConnectionEnd>, close: () => void): WatchedConnection {
  let done = false;
  // The second handler also keeps a rejection nobody awaits (a bystander's) from crashing the run.
  ended.then(
    () => {
      done = true;
    },
    () => {},
  );
  return { transport, ended, hasEnded: () => done, close };
}

async function sse(hubUrl: string, jwt: string): Promise<WatchedConnection> {
  const conn = await openSse(`${hubUrl}/_gw/v1/connection/sse?jwt=${jwt}`);
  if (conn.status !== 200) throw new Refused(`${conn.status} ${conn.errorBody}`);
  await waitFor(() => conn.frames.length >= welcomeEvents, { what: 'SSE welcome events' });
  const ended = conn.ended.then(() => ({
    at: performance.now(),
    lastEvent: conn.frames.at(-1)?.event,
    how: 'stream ended',
  }));
  return tracked('sse', ended, () => conn.close());
}

async function ws(hubUrl: string, jwt: string): Promise<WatchedConnection> {
  const socket = new WebSocket(`${hubUrl.replace(/^http/, 'ws')}/_gw/v1/connection/ws?jwt=${jwt}`);
  const events: string[] = [];
  socket.on('error', () => {}); // a failed handshake; 'close' follows and tells the test
  socket.on('message', (data) => events.push(JSON.parse(data.toString())['type']));
  const ended = once(socket, 'close').then(([code, reason]) => ({
    at: performance.now(),
    lastEvent: events.at(-1),
    how: `close ${code} ${String(reason)}`,
  }));
  const welcomed = waitFor(() => events.length >= welcomeEvents, { what: 'WebSocket welcome events' });
  const first = await Promise.race([welcomed.then(() => undefined), ended]);
  if (first !== undefined) throw new Refused(first.how);
  return tracked('ws', ended, () => socket.close());
}

async function socketIo(
  hubUrl: string,
  jwt: string,
  engine: 'websocket' | 'polling',
): Promise<WatchedConnection> {
  const socket = io(hubUrl, {
    path: '/_gw/v1/socket.io/',
    auth: { jwt },
    transports: [engine],
    reconnection: false,
  });
  const events: string[] = [];
  socket.onAny((type: string) => events.push(type));
  const ended = new Promise<ConnectionEnd>((resolve) =>
    socket.on('disconnect', (reason) =>
      resolve({ at: performance.now(), lastEvent: events.at(-1), how: `disconnect: ${reason}` }),
    ),
  );
  const refused = new Promise<string>((resolve) =>
    socket.on('connect_error', (err: Error & { data?: { status?: number } }) =>
      resolve(`${err.data?.status} ${err.message}`),
    ),
  );
  const welcomed = waitFor(() => events.length >= welcomeEvents, { what: 'socket.io welcome events' });
  const refusal = await Promise.race([welcomed.then(() => undefined), refused]);
  if (refusal !== undefined) {
    socket.close();
    throw new Refused(refusal);
  }
  return tracked(`socketio-${engine}`, ended, () => socket.close());
}

/** A long-polling client as a browser runs it: cookies kept, one poll after the other. */
async function longPolling(
  hubUrl: string,
  jwt: string,
  retryUnavailable: boolean,
): Promise<WatchedConnection> {
  const cookies = new Map<string, string>();
  const abort = new AbortController();
  const get = async (query = '') => {
    const res = await fetch(`${hubUrl}/_gw/v1/connection/longpolling${query}`, {
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      signal: abort.signal,
    });
    for (const c of res.headers.getSetCookie()) {
      const [k, v] = c.split(';')[0]!.split('=');
      if (c.includes('Max-Age=0')) cookies.delete(k!);
      else cookies.set(k!, v ?? '');
    }
    return { status: res.status, text: await res.text() };
  };
  const created = await get(`?jwt=${jwt}`);
  if (created.status !== 200) throw new Refused(`${created.status} ${created.text}`);
  const welcome = JSON.parse((await get()).text) as { events: Array<{ type: string }> };
  if (welcome.events.length < welcomeEvents)
    throw new Error(`no long-poll welcome: ${JSON.stringify(welcome)}`);

  const ended = (async (): Promise<ConnectionEnd> => {
    for (;;) {
      const r = await get();
      if (r.status === 503 && retryUnavailable) {
        await new Promise((wait) => setTimeout(wait, 1000));
        continue;
      }
      if (r.status !== 200) throw new Error(`poll answered ${r.status} ${r.text}`);
      const { events } = JSON.parse(r.text) as { events: Array<{ type: string }> };
      if (!cookies.has('connection_token'))
        return { at: performance.now(), lastEvent: events.at(-1)?.type, how: 'cookie cleared' };
    }
  })();
  // Closing aborts the poll in flight: that rejection is the close, not a failure.
  const watched = ended.catch((err: unknown) =>
    abort.signal.aborted ? new Promise<never>(() => {}) : Promise.reject(err),
  );
  return tracked('longpolling', watched, () => abort.abort());
}
