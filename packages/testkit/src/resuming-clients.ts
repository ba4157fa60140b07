/**
 * Light SSE, WebSocket, long-polling and socket.io clients that behave as good clients do across a
 * rolling restart or a crash: when the stream ends they reconnect (SSE after the server's `retry:`
 * hint, the others after a short random delay; a refused connect after its Retry-After; a failed socket.io connect after socket.io's own backoff) to a
 * replica the balancer picks, with the last position they got, and they record what they receive. Only what the figures need is parsed: the `n` of each `greeting` event (a regex on
 * the JSON text, no JSON.parse per event) and when it first arrived, the stream position, the HTTP
 * status or close code of every refused connect, how long each client took to be receiving again
 * after a stream ended, and whether a stream is open now (a killed session's must not be).
 */
import { Agent, type ClientRequest, request } from 'node:http';
import { io, type Socket } from 'socket.io-client';
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
  /** When the first frame after the last `watch()` arrived (a client the fault did not cut too). */
  frameAfterWatch: number | undefined;
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
    frameAfterWatch: undefined,
  };
  protected readonly path: string;
  protected readonly pick: PickReplica;
  protected readonly options: ResumingClientOptions;
  protected lastPosition: string | undefined;
  private endedAt: number | undefined;
  private watching = false;
  protected stopped = false;
  private timer: NodeJS.Timeout | undefined;
  /** The next connect goes at once, whatever delay the closed stream's handler asks for. */
  private reconnectNow = false;

  constructor(pick: PickReplica, path: string, options: ResumingClientOptions = {}) {
    this.pick = pick;
    this.path = path;
    this.options = options;
    this.lastPosition = options.resumeFrom;
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

  /**
   * Closes the stream and connects again at once, resuming from the last position (a page that
   * reloads and keeps its place): one disconnect and one connect, for a bench's churn.
   */
  reconnect(): void {
    if (this.stopped) return;
    this.reconnectNow = true;
    this.close();
  }

  /** From now on, `record.frameAfterWatch` notes when the next frame arrives. */
  watch(): void {
    this.watching = true;
    this.record.frameAfterWatch = undefined;
  }

  protected abstract open(base: string): void;
  protected abstract close(): void;

  protected connectSoon(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    if (this.reconnectNow) {
      this.reconnectNow = false;
      delayMs = 0;
    }
    this.timer = setTimeout(() => {
      const base = this.pick();
      if (base === undefined) return this.connectSoon(100);
      this.options.observer?.connecting?.(base);
      this.open(base);
    }, delayMs);
  }

  /** A frame arrived: its position (when it has one) and its JSON. */
  protected frame(position: string | undefined, type: string, json: string): void {
    this.record.open = true;
    if (this.watching) {
      this.watching = false;
      this.record.frameAfterWatch = Date.now();
    }
    if (this.endedAt !== undefined) {
      this.record.backAfter.push(Date.now() - this.endedAt);
      this.endedAt = undefined;
    }
    if (position !== undefined) {
      this.record.start ??= position;
      this.lastPosition = position;
    }
    if (type === 'gw.resync_required') this.record.resyncs++;
    this.options.observer?.frame?.(type, json);
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

  /** After a refusal: its Retry-After (seconds) spread over up to twice that, or a second. */
  protected retryAfterRefusal(retryAfter: string | string[] | undefined): void {
    const seconds = Number(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
    const base = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000;
    this.connectSoon(base + Math.random() * base);
  }
}

export interface ResumingClientOptions {
  /** The position to resume from at the first connect. */
  resumeFrom?: string;
  /** The local address to connect from (a loopback address: each one its own client address). */
  localAddress?: string;
  /** Told of every connect (the replica it goes to) and every frame, for a bench that counts them. */
  observer?: {
    connecting?(base: string): void;
    frame?(type: string, json: string): void;
  };
}

/** SSE over node:http (it de-chunks); the `retry:` hint sets the reconnection delay, as EventSource does. */
export class ResumingSseClient extends ResumingClient {
  private req: ClientRequest | undefined;
  private retryMs = 250;

  protected open(base: string): void {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.lastPosition !== undefined) headers['last-event-id'] = this.lastPosition;
    const req = request(`${base}${this.path}`, {
      headers,
      agent: false,
      ...(this.options.localAddress && { localAddress: this.options.localAddress }),
    });
    this.req = req;
    let opened = false;
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        this.refused(res.statusCode ?? 0);
        res.resume();
        res.on('end', () => this.retryAfterRefusal(res.headers['retry-after']));
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

/** WebSocket with `?positions=true`; reconnects with `lastEventId=<gwposition or gwcontrol>`. */
export class ResumingWsClient extends ResumingClient {
  private ws: WebSocket | undefined;

  protected open(base: string): void {
    const resume =
      this.lastPosition === undefined ? '' : `&lastEventId=${encodeURIComponent(this.lastPosition)}`;
    const ws = new WebSocket(`${base.replace('http', 'ws')}${this.path}&positions=true${resume}`, {
      perMessageDeflate: false,
      ...(this.options.localAddress && { localAddress: this.options.localAddress }),
    });
    this.ws = ws;
    let opened = false;
    ws.on('open', () => {
      opened = true;
    });
    let retryAfter: string | string[] | undefined;
    ws.on('unexpected-response', (_req, res) => {
      this.refused(res.statusCode ?? 0);
      retryAfter = res.headers['retry-after'] ?? '';
      res.resume();
      // With a listener here, ws leaves the socket connecting for ever: end the attempt.
      ws.terminate();
    });
    ws.on('message', (data) => {
      const json = data.toString();
      const type = /"type":"([^"]*)"/.exec(json)?.[1] ?? '';
      // A stream event's position is `gwposition`; the hub's own events (the welcome) carry theirs
      // as `gwcontrol`, empty when they have none.
      const position = /"(?:gwposition|gwcontrol)":"([^"]+)"\}$/.exec(json)?.[1];
      this.frame(position, type, json);
    });
    ws.on('error', () => {});
    ws.on('close', (code) => {
      if (code >= 4000) this.refused(code - 4000);
      if (!opened && retryAfter !== undefined) return this.retryAfterRefusal(retryAfter);
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

/**
 * Long-polling as a browser does it: the cookies (connection token, cursor, acknowledged private
 * events) kept across polls and across replicas; a poll that fails is made again, soon, to whichever
 * replica the balancer picks, with the same cookies, so it goes on from its cursor.
 */
export class ResumingLongPollClient extends ResumingClient {
  private readonly cookies = new Map<string, string>();
  private req: ClientRequest | undefined;
  private agent: Agent | undefined;

  protected open(base: string): void {
    this.agent ??= new Agent({
      keepAlive: true,
      ...(this.options.localAddress && { localAddress: this.options.localAddress }),
    });
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const req = request(`${base}${this.path}`, { agent: this.agent, headers: cookie ? { cookie } : {} });
    this.req = req;
    req.on('response', (res) => {
      for (const c of res.headers['set-cookie'] ?? []) {
        const [pair] = c.split(';');
        const eq = pair!.indexOf('=');
        if (c.includes('Max-Age=0')) this.cookies.delete(pair!.slice(0, eq));
        else this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
      }
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        if (res.statusCode !== 200) {
          this.refused(res.statusCode ?? 0);
          this.ended();
          return this.retryAfterRefusal(res.headers['retry-after']);
        }
        this.answered(body);
        this.connectSoon(0);
      });
      res.on('error', () => this.failed());
    });
    req.on('error', () => this.failed());
    req.end();
  }

  /** `"ok"` (a new connection) or `{"last_event_id": …, "events": […]}`. */
  private answered(body: string): void {
    if (body === '"ok"') {
      this.frame(undefined, 'gw.connection.create', body);
      return;
    }
    const answer = JSON.parse(body) as { last_event_id: string; events: Array<{ type: string }> };
    for (const e of answer.events) this.frame(undefined, e.type, JSON.stringify(e));
    if (answer.last_event_id) this.lastPosition = answer.last_event_id;
    // An answer is a sign of life even without events.
    this.frame(undefined, 'gw.poll', '');
  }

  private failed(): void {
    this.ended();
    this.connectSoon(50 + Math.random() * 200);
  }

  protected close(): void {
    this.req?.destroy();
    this.agent?.destroy();
  }
}

/**
 * socket.io with its own resume protocol (the last position comes back as `auth.offset`), made anew
 * to the replica the balancer picks after a disconnect (the socket.io client alone would go back to
 * the same URL). `path` is the subscriptions as JSON text; `jwt` is sent in `auth` when given.
 */
export class ResumingSocketIoClient extends ResumingClient {
  private socket: Socket | undefined;
  private failedAttempts = 0;
  private readonly jwt: string | undefined;

  constructor(
    pick: PickReplica,
    subscriptions: string,
    options: ResumingClientOptions & { jwt?: string } = {},
  ) {
    super(pick, subscriptions, options);
    this.jwt = options.jwt;
  }

  protected open(base: string): void {
    const agent = this.options.localAddress
      ? new Agent({ localAddress: this.options.localAddress })
      : undefined;
    const socket = io(base, {
      path: '/_gw/v1/socket.io/',
      reconnection: false,
      forceNew: true,
      auth: {
        subscriptions: JSON.parse(this.path),
        ...(this.jwt && { jwt: this.jwt }),
        ...(this.lastPosition !== undefined && { offset: this.lastPosition }),
      },
      ...(agent && { agent: agent as unknown as string, localAddress: this.options.localAddress }),
    } as Parameters<typeof io>[1]);
    this.socket = socket;
    let opened = false;
    socket.on('connect', () => {
      opened = true;
      this.failedAttempts = 0;
    });
    socket.onAny((type: string, event: { data?: { n?: number } }, position?: string) => {
      this.frame(position, type, type === 'greeting' ? `"n":${event?.data?.n}` : '');
    });
    // A refused engine.io handshake is an HTTP status the client keeps as the error's description;
    // its Retry-After is not readable, so the client backs off as socket.io's own reconnection does.
    socket.on('connect_error', (err: Error & { data?: { status?: number }; description?: unknown }) => {
      this.refused(err.data?.status ?? (typeof err.description === 'number' ? err.description : 0));
      socket.close();
      this.connectSoon(this.backoffMs());
    });
    // Also when the engine closes before the socket.io connect was answered (a poll that failed, a
    // ping that timed out): that attempt is over, and without `reconnection` nothing makes another.
    socket.on('disconnect', () => {
      socket.close();
      if (this.stopped) return;
      if (!opened) return this.connectSoon(this.backoffMs());
      this.ended();
      this.connectSoon(Math.random() * 500);
    });
  }

  protected close(): void {
    this.socket?.close();
  }

  /**
   * socket.io-client's reconnection delay for the attempts failed in a row: 1 s doubling up to 5 s,
   * randomized by half either way (its reconnectionDelay, reconnectionDelayMax and
   * randomizationFactor defaults). A flat retry keeps a replica that is slow to answer handshakes
   * busy with handshakes whose clients have given up.
   */
  private backoffMs(): number {
    this.failedAttempts++;
    const delay = Math.min(5000, 1000 * 2 ** (this.failedAttempts - 1));
    return delay * (0.5 + Math.random());
  }
}
