/**
 * The real gateway for the client's tests: the embedded one (every service in this process, memory
 * bus and store) behind a proxy the test can cut or make block requests, and helpers to publish
 * events, sign JWTs and collect what a client gets.
 */
import { signJwt, withExpiry } from '@gatehouse/auth';
import { MemoryBus } from '@gatehouse/bus';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '@gatehouse/embedded';
import { after, before } from 'node:test';
import { CuttableProxy, waitFor } from '@gatehouse/testkit';
import { type CloudEvent, type ConnectionState, Gatehouse, type GatehouseOptions } from '../src/index.ts';

export const jwtKey = 'client-test-secret-of-sufficient-length';

export interface GatewayFixture {
  gateway: EmbeddedGateway;
  /** The edge, directly. */
  edge: string;
  /** The edge through the proxy. */
  url: string;
  proxy: CuttableProxy;
  apiUrl: string;
  /** An event whose data is `{ n, ...fields }`, with the id `e-<n>` (the gateway drops a repeated id). */
  publish(n: number, type?: string, fields?: Record<string, unknown>): Promise<void>;
  /** Puts a message on the fan-out stream directly, past the publisher and its checks. */
  inject(event: Record<string, unknown>): Promise<void>;
  stop(): Promise<void>;
}

export async function startGatewayFixture(settings: Record<string, string> = {}): Promise<GatewayFixture> {
  const bus = new MemoryBus();
  const gateway = await startEmbeddedGateway(
    {
      ...ephemeralGatewaySettings,
      JWT_SECRET_KEY: jwtKey,
      ...settings,
    },
    { bus },
  );
  const proxy = await CuttableProxy.start({ host: '127.0.0.1', port: gateway.publicPort! });
  const edge = `http://127.0.0.1:${gateway.publicPort}`;
  return {
    gateway,
    edge,
    url: `http://127.0.0.1:${proxy.port}`,
    proxy,
    apiUrl: `http://127.0.0.1:${gateway.apiPort}`,
    async publish(n, type = 'order.updated', fields = {}) {
      const res = await fetch(`${edge}/_gw/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          specversion: '1.0',
          id: `e-${n}`,
          type,
          source: 'client-test',
          data: { n, ...fields },
        }),
      });
      if (res.status !== 202) throw new Error(`publish ${n}: ${res.status} ${await res.text()}`);
    },
    async inject(event) {
      await bus.publish(settings['FANOUT_TOPIC'] ?? 'gw.events', { value: JSON.stringify(event) });
    },
    async stop() {
      await proxy.close();
      await gateway.stop();
    },
  };
}

export function jwt(claims: Record<string, unknown> = {}, seconds = 3600): string {
  return signJwt(withExpiry({ jti: `j-${Math.random()}`, ...claims }, seconds), {
    alg: 'HS256',
    key: jwtKey,
  });
}

/** What a client got: the `n` of each event in arrival order, its states and resyncs. */
export interface Received {
  ns: number[];
  events: CloudEvent[];
  states: ConnectionState[];
  resyncs: number;
  /** The reason of each resync. */
  resyncReasons: string[];
}

export function record(gw: Gatehouse): Received {
  const got: Received = { ns: [], events: [], states: [], resyncs: 0, resyncReasons: [] };
  gw.on('event', (e) => {
    got.events.push(e);
    got.ns.push((e.data as { n: number }).n);
  });
  gw.on('state', (s) => got.states.push(s));
  gw.on('resync', (resync) => {
    got.resyncs++;
    got.resyncReasons.push(resync.reason);
  });
  return got;
}

export async function connected(gw: Gatehouse, timeoutMs = 20_000): Promise<void> {
  await waitFor(() => gw.state.state === 'connected', { timeoutMs });
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/**
 * The fixture of a describe block: the gateway started before its tests (long polls answered within
 * a second) and stopped after them, with every client `client` made closed first.
 */
export function useGatewayFixture(settings: Record<string, string> = {}) {
  let fx: GatewayFixture | undefined;
  const clients: Gatehouse[] = [];
  before(async () => {
    fx = await startGatewayFixture({ LONGPOLL_TIMEOUT: '1s', ...settings });
  });
  after(async () => {
    for (const c of clients) c.close();
    await fx?.stop();
  });
  return {
    get fx(): GatewayFixture {
      return fx!;
    },
    /** A client of the gateway through the proxy, with short backoff. */
    client(options: GatehouseOptions): Gatehouse {
      const gw = new Gatehouse(fx!.url, { backoff: { initialMs: 50, maxMs: 500 }, ...options });
      clients.push(gw);
      return gw;
    },
  };
}
