/**
 * Light SSE and WebSocket clients that behave as good clients do across a rolling restart: when the
 * stream ends they reconnect (SSE after the server's `retry:` hint, WebSocket after a short random
 * delay) to a replica the balancer picks, with the last position they got, and they record what
 * they receive. Only what the figures need is parsed: the `n` of each `greeting` event (a regex on
 * the JSON text, no JSON.parse per event) and when it first arrived, the stream position, the HTTP
 * status or close code of every refused connect, how long each client took to be receiving again
 * after a stream ended, and whether a stream is open now (a killed session's must not be).
 */
import { type ClientRequest, request } from 'node:http';
import WebSocket from 'ws';

/** Which replica to connect to now: `http://127.0.0.1:<port>`, or undefined while none is ready. */
export type PickReplica = () => string | undefined;

export interface ClientRecord {
  /** Position of the first frame the client got: it expects every event of its group after it. */
  start: string | undefined;
  /** How many times each `n` arrived. */
  seen: Map<number, number>;
  /** When each `n` first arrived (ms since the epoch). */
  arrivedAt: Map<number, number>;
  /** Every copy of an `n` after its first, and when it arrived. */
  repeats: Array<{ n: number; at: number }>;
  /** HTTP statuses (and WebSocket 4000+status closes) of refused connects. */
  refusals: number[];
  /** ms from a stream's end to the first frame of the next one. */
  backAfter: number[];
  resyncs: number;
  /** A stream is open: it delivered a frame and has not ended since. */
  open: boolean;
}

const nPattern = /"n":(\d+)/;

abstract class ResumingClient {
  readonly record: ClientRecord = {
    start: undefined,
    seen: new Map(),
    arrivedAt: new Map(),
    repeats: [],
    refusals: [],
    backAfter: [],
    resyncs: 0,
    open: false,
  };
  protected readonly path: string;
  protected readonly pick: PickReplica;
  protected lastPosition: string | undefined;
  private endedAt: number | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(pick: PickReplica, path: string, resumeFrom?: string) {
    this.pick = pick;
    this.path = path;
    this.lastPosition = resumeFrom;
  }

  start(): void {
    this.connectSoon(0);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.close();
    this.record.open = false;
  }

  protected abstract open(base: string): void;
  protected abstract close(): void;

  protected connectSoon(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      const base = this.pick();
      if (base === undefined) this.connectSoon(100);
      else this.open(base);
    }, delayMs);
  }

  /** A frame arrived: its position (when it has one) and its JSON. */
  protected frame(position: string | undefined, type: string, json: string): void {
    this.record.open = true;
    if (this.endedAt !== undefined) {
      this.record.backAfter.push(Date.now() - this.endedAt);
      this.endedAt = undefined;
    }
    if (position !== undefined) {
      this.record.start ??= position;
      this.lastPosition = position;
    }
    if (type === 'gw.resync_required') this.record.resyncs++;
    if (type !== 'greeting') return;
    const n = Number(nPattern.exec(json)?.[1]);
    const times = this.record.seen.get(n) ?? 0;
    this.record.seen.set(n, times + 1);
    if (times === 0) this.record.arrivedAt.set(n, Date.now());
    else this.record.repeats.push({ n, at: Date.now() });
  }

  /** The stream ended after it had been open: the clock for "back to receiving" starts. */
  protected ended(): void {
    this.record.open = false;
    this.endedAt ??= Date.now();
  }

  protected refused(status: number): void {
    this.record.refusals.push(status);
  }
}

/** SSE over node:http (it de-chunks); the `retry:` hint sets the reconnection delay, as EventSource does. */
export class ResumingSseClient extends ResumingClient {
  private req: ClientRequest | undefined;
  private retryMs = 250;

  protected open(base: string): void {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.lastPosition !== undefined) headers['last-event-id'] = this.lastPosition;
    const req = request(`${base}${this.path}`, { headers, agent: false });
    this.req = req;
    let opened = false;
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        this.refused(res.statusCode ?? 0);
        res.resume();
        res.on('end', () => this.connectSoon(1000));
        return;
      }
      opened = true;
      res.setEncoding('utf8');
      let buffer = '';
      let id: string | undefined;
      let event = 'message';
      let data = '';
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let nl = buffer.indexOf('\n');
        while (nl >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line === '') {
            if (data !== '') this.frame(id, event, data);
            id = undefined;
            event = 'message';
            data = '';
          } else if (line.startsWith('data: ')) data = line.slice(6);
          else if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('id: ')) id = line.slice(4);
          else if (line.startsWith('retry: ')) this.retryMs = Number(line.slice(7));
          nl = buffer.indexOf('\n');
        }
      });
      res.on('close', () => {
        this.ended();
        this.connectSoon(this.retryMs);
      });
    });
    req.on('error', () => {
      // Refused (the replica is gone) or cut: try again, soon, wherever the balancer says.
      if (!opened) this.connectSoon(50);
    });
    req.end();
  }

  protected close(): void {
    this.req?.destroy();
  }
}

/** WebSocket with `?positions=true`; reconnects with `lastEventId=<gwposition>`. */
export class ResumingWsClient extends ResumingClient {
  private ws: WebSocket | undefined;

  protected open(base: string): void {
    const resume =
      this.lastPosition === undefined ? '' : `&lastEventId=${encodeURIComponent(this.lastPosition)}`;
    const ws = new WebSocket(`${base.replace('http', 'ws')}${this.path}&positions=true${resume}`, {
      perMessageDeflate: false,
    });
    this.ws = ws;
    let opened = false;
    ws.on('open', () => {
      opened = true;
    });
    ws.on('unexpected-response', (_req, res) => {
      this.refused(res.statusCode ?? 0);
      res.resume();
    });
    ws.on('message', (data) => {
      const json = data.toString();
      const type = /"type":"([^"]*)"/.exec(json)?.[1] ?? '';
      const position = /"gwposition":"([^"]*)"\}$/.exec(json)?.[1];
      this.frame(position, type, json);
    });
    ws.on('error', () => {});
    ws.on('close', (code) => {
      if (code >= 4000) this.refused(code - 4000);
      if (!opened) return this.connectSoon(code >= 4000 ? 1000 : 50);
      this.ended();
      // A good client spreads its reconnects too (1012 says nothing about when).
      this.connectSoon(Math.random() * 500);
    });
  }

  protected close(): void {
    this.ws?.terminate();
  }
}
