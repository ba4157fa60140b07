/**
 * Sends one corpus case over a raw socket and reports what came back: an HTTP status (0 when the
 * connection closed without one), a WebSocket close code (1006 without a close frame), or
 * `hang` when nothing happened within the wait; for a correlated response, also what the request
 * waiting for it got.
 */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import type { CorpusCase, HttpCase, ResponseCase, SocketIoPollingCase, WsCase } from './corpus-case.ts';
import { head, withLength } from './corpus-case.ts';
import type { WaitAnswer, WaitingRequests } from './waiting-requests.ts';

export interface Ports {
  edge: number;
  rest: number;
  /** The internal API (API_PORT), where `/vN/responses` are. */
  internal: number;
  waits: WaitingRequests;
}

export type Outcome =
  | { status: number; delivered?: WaitAnswer | string }
  | { closeCode: number }
  | { hang: true };

/** What a waiting request gets from the proper response sent after a case that delivered nothing. */
export const probeAnswer: WaitAnswer = { status: 203, body: 'the probe after the case' };

const answerWaitMs = 20_000;
const endlessCapBytes = 32 * 1024 * 1024;

export function sendCase(c: CorpusCase, ports: Ports): Promise<Outcome> {
  switch (c.kind) {
    case 'http':
      return sendHttp(c, c.via === 'edge' ? ports.edge : ports.rest);
    case 'ws':
      return sendWs(c, ports.edge);
    case 'socketio-polling':
      return sendSocketIoPolling(c, ports.edge);
    case 'response':
      return sendResponse(c, ports);
  }
}

/**
 * The case sent for a request waiting at the edge, then what that request got: the response the
 * case delivered or, after a case that was refused, the probe, a proper response sent next (which
 * a refused case must have left the request waiting for).
 */
async function sendResponse(c: ResponseCase, ports: Ports): Promise<Outcome> {
  const wait = await ports.waits.open(ports.edge);
  try {
    const outcome = await sendHttp(c.build(wait.correlation), ports.internal);
    if (!('status' in outcome)) return outcome;
    if (outcome.status !== 202) {
      const body = Buffer.from(probeAnswer.body);
      const probe = await sendHttp(
        {
          head: withLength(
            'POST /v3/responses HTTP/1.1',
            { 'gw-correlation': wait.correlation, 'gw-response-code': String(probeAnswer.status) },
            body,
          ),
          body,
        },
        ports.internal,
      );
      if (!('status' in probe) || probe.status !== 202)
        return { ...outcome, delivered: `the probe after the case was answered ${JSON.stringify(probe)}` };
    }
    const delivered = await Promise.race([
      wait.answer,
      new Promise<string>((resolve) => setTimeout(resolve, answerWaitMs, 'nothing').unref()),
    ]);
    return { ...outcome, delivered };
  } finally {
    wait.abort();
  }
}

/** Resolves once the socket has an HTTP status line, closes, or the wait is over. */
function sendHttp(c: Pick<HttpCase, 'head' | 'body' | 'endless' | 'reset'>, port: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let done = false;
    const finish = (outcome: Outcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (c.reset && !socket.destroyed) socket.resetAndDestroy();
      else socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish({ hang: true }), answerWaitMs);
    socket.on('error', () => finish(statusOf(received) ?? { status: 0 }));
    socket.on('close', () => finish(statusOf(received) ?? { status: 0 }));
    socket.on('data', (data: Buffer) => {
      received += data.toString('latin1');
      const status = statusOf(received);
      if (status) finish(status);
    });
    socket.once('connect', () => {
      socket.write(`${c.head}\r\n\r\n`);
      if (c.body) socket.write(c.body);
      if (c.endless) void writeEndlessly(socket, c.endless, () => done);
    });
  });
}

/** Writes `piece` with backpressure until the answer came or the cap is reached. */
async function writeEndlessly(socket: Socket, piece: Buffer, stop: () => boolean): Promise<void> {
  for (let sent = 0; sent < endlessCapBytes && !stop() && socket.writable; sent += piece.length) {
    if (!socket.write(piece))
      await new Promise<void>((resolve) => {
        socket.once('drain', resolve);
        socket.once('close', resolve);
      });
  }
}

function statusOf(text: string): Outcome | undefined {
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  return match ? { status: Number(match[1]) } : undefined;
}

/** Opens a WebSocket on `path`, writes the frames, and reads server frames until a close frame. */
function sendWs(c: WsCase, port: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let buffer = Buffer.alloc(0);
    let upgraded = false;
    let done = false;
    const finish = (outcome: Outcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish({ hang: true }), answerWaitMs);
    socket.on('error', () => finish({ closeCode: 1006 }));
    socket.on('close', () =>
      finish(upgraded ? { closeCode: 1006 } : (statusOf(buffer.toString('latin1')) ?? { status: 0 })),
    );
    socket.on('data', (data: Buffer) => {
      buffer = Buffer.concat([buffer, data]);
      if (!upgraded) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const status = statusOf(buffer.toString('latin1'));
        if (!status || !('status' in status) || status.status !== 101) return finish(status ?? { status: 0 });
        upgraded = true;
        buffer = buffer.subarray(end + 4);
        for (const f of c.frames) socket.write(f);
      }
      const code = closeCodeIn(buffer);
      if (code !== undefined) finish({ closeCode: code });
    });
    socket.once('connect', () => {
      socket.write(
        `${head(`GET ${c.path} HTTP/1.1`, {
          upgrade: 'websocket',
          connection: 'Upgrade',
          'sec-websocket-key': randomBytes(16).toString('base64'),
          'sec-websocket-version': 13,
        })}\r\n\r\n`,
      );
    });
  });
}

/** The code of the first close frame among the server's frames, once it is all there. */
function closeCodeIn(buffer: Buffer): number | undefined {
  let at = 0;
  while (at + 2 <= buffer.length) {
    const opcode = buffer[at]! & 0x0f;
    let length = buffer[at + 1]! & 0x7f;
    let start = at + 2;
    if (length === 126) {
      if (start + 2 > buffer.length) return undefined;
      length = buffer.readUInt16BE(start);
      start += 2;
    } else if (length === 127) {
      if (start + 8 > buffer.length) return undefined;
      length = Number(buffer.readBigUInt64BE(start));
      start += 8;
    }
    if (start + length > buffer.length) return undefined;
    if (opcode === 8) return length >= 2 ? buffer.readUInt16BE(start) : 1005;
    at = start + length;
  }
  return undefined;
}

/** An engine.io polling handshake, then the case's body POSTed to that session. */
async function sendSocketIoPolling(c: SocketIoPollingCase, port: number): Promise<Outcome> {
  const path = '/_gw/v1/socket.io/?EIO=4&transport=polling';
  const handshake = await fetch(`http://127.0.0.1:${port}${path}`, {
    signal: AbortSignal.timeout(answerWaitMs),
  });
  const sid = /"sid":"([^"]+)"/.exec(await handshake.text())?.[1];
  if (!sid) return { status: handshake.status };
  const headers = { 'content-type': 'text/plain;charset=UTF-8' };
  return sendHttp(
    { head: withLength(`POST ${path}&sid=${sid} HTTP/1.1`, headers, c.body), body: c.body },
    port,
  );
}
