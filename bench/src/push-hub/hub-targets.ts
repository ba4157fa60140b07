/**
 * The hubs the push-hub benchmark compares, each started on demand (one at a time, so no hub's
 * memory or CPU disturbs another's numbers): the raw Node baselines B-sse and B-ws, Gatehouse's
 * embedded runner (publisher + push hub on the memory bus) over SSE or WebSocket, and Pushpin.
 * Every hub runs on the server CPU; the same CloudEvent JSON is published to each in its own way.
 */
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { startPushpin } from '../baselines/pushpin-hub.ts';
import type { PushTransport } from '../clients/push-client-messages.ts';
import { cpuNanosOf, descendantsOf } from '../harness/proc.ts';
import { type PinnedProcess, spawnPinned } from '../harness/spawn-pinned.ts';

export interface HubMemory {
  /** VmRSS (summed over the hub's processes) after a full GC, in bytes. */
  rss: number;
  /** V8 heapUsed after that GC, for Node hubs. */
  heap: number | undefined;
  /**
   * VmRSS after V8's memory-reducing GC, which also shrinks the young generation that a plain GC
   * leaves as large as the last allocation burst grew it (Node hubs; the same as `rss` for others).
   */
  reducedRss: number;
}

export interface RunningHub {
  transport: PushTransport;
  port: number;
  /** Connect paths; client connection i uses paths[i % paths.length]. */
  paths: string[];
  /** Publishes one CloudEvent (JSON text); resolves when the hub acknowledged it. */
  publish(eventJson: string): Promise<void>;
  /**
   * Memory now. `idle`: before any connection, where the memory-reducing GC runs first so that the
   * young generation starts from its minimum for every hub (Gatehouse's startup leaves it at 32–64
   * MiB, a bare hub's at 4); with connections, the plain GC runs first so that it sees the young
   * generation as the connect burst grew it.
   */
  memory(when: 'idle' | 'loaded'): Promise<HubMemory>;
  /** CPU time of all the hub's threads (schedstat, ns resolution), in seconds. */
  cpuSeconds(): number;
  /** The same from /proc/<pid>/stat utime + stime (10 ms ticks), for Node hubs. */
  statCpuSeconds?(): number;
  /** Every process of the hub, for an emergency kill. */
  pids(): number[];
  stop(): Promise<void>;
}

export interface HubTarget {
  /** Short name in reports: B-sse, gatehouse-sse … */
  name: string;
  transport: PushTransport;
  /** Slower connect pacing than the default, for a hub that fails under the default burst. */
  connectPacing?: { batchSize: number; maxPending: number };
  start(): Promise<RunningHub>;
}

const root = fileURLToPath(new URL('../../../', import.meta.url));
const embeddedMain = `${root}embedded/src/main.ts`;
const rawSseHub = fileURLToPath(new URL('../baselines/raw-sse-hub.ts', import.meta.url));
const rawWsHub = fileURLToPath(new URL('../baselines/raw-ws-hub.ts', import.meta.url));

export const GATEHOUSE_SSE_PATH = '/_gw/v1/connection/sse';
export const GATEHOUSE_WS_PATH = '/_gw/v1/connection/ws';

export function subscriptionPath(base: string, subscriptions: unknown[]): string {
  return `${base}?subscriptions=${encodeURIComponent(JSON.stringify(subscriptions))}`;
}

export function rawHub(transport: PushTransport, port: number, cpu: number): HubTarget {
  return {
    name: transport === 'sse' ? 'B-sse' : 'B-ws',
    transport,
    async start() {
      const p = await spawnPinned({
        name: `raw ${transport} hub`,
        script: transport === 'sse' ? rawSseHub : rawWsHub,
        port,
        cpu,
        env: { PORT: String(port) },
        probe: true,
      });
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      return nodeHub(p, {
        transport,
        port,
        paths: [transport === 'sse' ? '/sse' : '/ws'],
        publish: (json) => post(agent, port, '/publish', json, 'application/json'),
      });
    },
  };
}

export interface GatehouseOptions {
  transport: PushTransport;
  port: number;
  apiPort: number;
  cpu: number;
  /** Connect paths (with their subscriptions); default: one subscription to `bench`. */
  paths?: string[];
  /** EXTRACTORS setting (JSON). */
  extractors?: string;
  name?: string;
  /** Extra Node options, e.g. --cpu-prof. */
  nodeArgs?: string[];
}

export function gatehouseHub(o: GatehouseOptions): HubTarget {
  const base = o.transport === 'sse' ? GATEHOUSE_SSE_PATH : GATEHOUSE_WS_PATH;
  return {
    name: o.name ?? `gatehouse-${o.transport}`,
    transport: o.transport,
    async start() {
      const p = await spawnPinned({
        name: 'gatehouse',
        script: embeddedMain,
        port: o.port,
        cpu: o.cpu,
        probe: true,
        nodeArgs: o.nodeArgs,
        env: {
          INBOUND_PORT: String(o.port),
          API_PORT: String(o.apiPort),
          HOST: '127.0.0.1',
          // The embedded REST engine listens on its own port (8085 by default): keep it off shared ports.
          REST_SERVER_PORT: String(o.port + 30),
          REST_SERVER_HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
          // The default 5000/min would refuse most of the 10k connections opened within seconds.
          MAX_CONNECTIONS_PER_MINUTE: '1000000',
          // Keeps heartbeat comments and pings (a 10k-write loop each) out of every measurement
          // window; the raw client does not answer pings.
          HEARTBEAT_INTERVAL: '10m',
          ...(o.extractors ? { EXTRACTORS: o.extractors } : {}),
        },
      });
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      return nodeHub(p, {
        transport: o.transport,
        port: o.port,
        paths: o.paths ?? [subscriptionPath(base, [{ eventType: 'bench' }])],
        publish: (json) => post(agent, o.apiPort, '/v3/messages', json, 'application/cloudevents+json'),
      });
    },
  };
}

export function pushpinHub(
  ports: Parameters<typeof startPushpin>[0]['ports'],
  cpu: number,
  maxConnections: number,
): HubTarget {
  return {
    name: 'pushpin',
    transport: 'sse',
    // At 500 per 20 ms Pushpin 1.36 answers hundreds of connects with 502 (its proxy reports the
    // zurl path to the origin "unavailable"); 20 per 20 ms with ≤ 50 pending opens all of them.
    connectPacing: { batchSize: 20, maxPending: 50 },
    async start() {
      const hub = await startPushpin({ ports, cpu, maxConnections });
      return {
        transport: 'sse',
        port: ports.http,
        paths: ['/stream'],
        publish: (json) => hub.publish(`event: bench\ndata: ${json}\n\n`),
        memory: async () => {
          const rss = hub.rssBytes();
          return { rss, heap: undefined, reducedRss: rss };
        },
        cpuSeconds: () => hub.cpuSeconds(),
        pids: () => hub.pids(),
        stop: () => hub.stop(),
      };
    },
  };
}

function nodeHub(
  p: PinnedProcess,
  o: Pick<RunningHub, 'transport' | 'port' | 'paths' | 'publish'>,
): RunningHub {
  return {
    ...o,
    async memory(when) {
      if (when === 'idle') {
        await p.memoryAfterGc(true);
        const reducedRss = p.rssBytes();
        const { heapUsed } = await p.memoryAfterGc();
        return { rss: p.rssBytes(), heap: heapUsed, reducedRss };
      }
      const { heapUsed } = await p.memoryAfterGc();
      const rss = p.rssBytes();
      await p.memoryAfterGc(true);
      return { rss, heap: heapUsed, reducedRss: p.rssBytes() };
    },
    cpuSeconds: () => cpuNanosOf(p.child.pid!) / 1e9,
    statCpuSeconds: () => p.cpuSeconds(),
    pids: () => (p.child.pid === undefined ? [] : [p.child.pid, ...descendantsOf(p.child.pid)]),
    stop: () => p.stop(),
  };
}

function post(agent: Agent, port: number, path: string, body: string, contentType: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: { 'content-type': contentType, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 202
            ? resolve()
            : reject(new Error(`publish to :${port}${path}: ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
