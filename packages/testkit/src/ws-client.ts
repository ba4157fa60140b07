/** A WebSocket test client that keeps every event it receives and how the connection closed. */
import { once } from 'node:events';
import WebSocket from 'ws';

export interface WsTestClient {
  ws: WebSocket;
  events: Array<Record<string, unknown>>;
  closed: Promise<{ code: number; reason: string }>;
}

export function openWs(url: string, headers: Record<string, string> = {}): WsTestClient {
  const ws = new WebSocket(url, { headers });
  const events: Array<Record<string, unknown>> = [];
  ws.on('message', (data) => events.push(JSON.parse(data.toString())));
  ws.on('error', () => {});
  const closed = once(ws, 'close').then(([code, reason]) => ({
    code: code as number,
    reason: String(reason),
  }));
  return { ws, events, closed };
}
