/**
 * Clients that connect and then never read again, over real sockets, in a process of their own (so
 * that what they hold is not counted as the hub's memory): what slow consumers, or an attacker
 * holding connections open, look like to the hub. Each reads until its subscription is confirmed,
 * then pauses its socket, so the server's writes pile up.
 *
 * Usage: node stalled-clients.ts sse|ws|socketio <hub url> <count> <subscriptions JSON>
 * Prints `ready <count>` once every client is set up, and exits when its stdin closes.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';

const confirmed = 'gw.subscriptions_set';
const batch = 50;

/** An SSE client over a raw socket. */
function stalledSse(url: URL, subscriptions: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const path = `/_gw/v1/connection/sse?subscriptions=${encodeURIComponent(subscriptions)}`;
    let received = '';
    socket.setEncoding('latin1');
    socket.on('error', () => undefined);
    socket.on('data', function onData(chunk: string) {
      received += chunk;
      if (!received.includes(confirmed)) return;
      socket.off('data', onData);
      socket.pause();
      resolve();
    });
    socket.on('close', () => reject(new Error(`closed before ready: ${received.slice(0, 200)}`)));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
  });
}

/** A plain WebSocket client. */
function stalledWs(url: URL, subscriptions: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(
      `ws://${url.host}/_gw/v1/connection/ws?subscriptions=${encodeURIComponent(subscriptions)}`,
    );
    ws.on('error', () => undefined);
    ws.on('message', (data) => {
      if (!data.toString().includes(confirmed)) return;
      ws.pause();
      resolve();
    });
    ws.on('close', () => reject(new Error('closed before ready')));
  });
}

/** A socket.io client speaking the engine.io WebSocket protocol itself. */
function stalledSocketIo(url: URL, subscriptions: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://${url.host}/_gw/v1/socket.io/?EIO=4&transport=websocket`);
    ws.on('error', () => undefined);
    ws.on('message', (data) => {
      const text = data.toString();
      if (text.startsWith('0')) ws.send(`40${JSON.stringify({ subscriptions: JSON.parse(subscriptions) })}`);
      else if (text.startsWith('44')) reject(new Error(`connect refused: ${text}`));
      else if (text.includes(confirmed)) {
        ws.pause();
        resolve();
      }
    });
    ws.on('close', () => reject(new Error('closed before ready')));
  });
}

async function main(): Promise<void> {
  const [kind, hubUrl, countText, subscriptions] = process.argv.slice(2);
  const open = kind === 'sse' ? stalledSse : kind === 'ws' ? stalledWs : stalledSocketIo;
  const url = new URL(hubUrl!);
  const count = Number(countText);
  for (let opened = 0; opened < count; opened += batch) {
    const n = Math.min(batch, count - opened);
    await Promise.all(Array.from({ length: n }, () => open(url, subscriptions!)));
  }
  console.log(`ready ${count}`);
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}

export interface StalledClients {
  stop(): Promise<void>;
}

/** Starts `count` stalled clients of `kind` in a child process; resolves once they are all set up. */
export async function startStalledClients(
  kind: 'sse' | 'ws' | 'socketio',
  hubUrl: string,
  count: number,
  subscriptions: unknown,
): Promise<StalledClients> {
  const child = spawn(
    process.execPath,
    [fileURLToPath(import.meta.url), kind, hubUrl, String(count), JSON.stringify(subscriptions)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout! });
  const exited = once(child, 'exit');
  const ready = new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => {
      if (line.startsWith('ready')) resolve();
    });
    exited.then(([code]) => reject(new Error(`stalled clients exited with ${code}`)));
  });
  const timer = setTimeout(() => child.kill(), 60_000);
  try {
    await ready;
  } finally {
    clearTimeout(timer);
  }
  return {
    async stop() {
      child.stdin!.end();
      child.kill();
      await exited;
    },
  };
}

/** TCP sockets open in this process. */
export function openTcpSockets(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
