/**
 * The hubs the push-hub benchmark compares, each started on demand (one at a time, so no hub's
 * memory or CPU disturbs another's numbers): the raw Node baselines B-sse and B-ws, Gatehouse's
 * embedded runner (publisher + push hub on the memory bus) over SSE or WebSocket, and the peers
 * Pushpin, Nchan and Centrifugo.
 * Every hub runs on the server CPU; the same CloudEvent JSON is published to each in its own way.
 */
import { readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { selfSignedCertificate } from '@gatehouse/testkit';
import { ensureBuilt } from '../../../tools/build.ts';
import { CENTRIFUGO_SSE_PATH, startCentrifugo } from '../baselines/centrifugo-hub.ts';
import { NCHAN_SUBSCRIBE_PATH, startNchan } from '../baselines/nchan-hub.ts';
import { startPushpin } from '../baselines/pushpin-hub.ts';
import type { PushTransport, PushWire } from '../clients/push-client-messages.ts';
import { post } from './publish.ts';
import { cpuNanosOf, descendantsOf } from '../harness/proc.ts';
import { type PinnedProcess, spawnPinned } from '../harness/spawn-pinned.ts';

/** How a hub's memory is read after a forced GC: Node (--expose-gc), Go (pprof gc=1) or none (C). */
export type GcKind = 'node' | 'go' | 'none';

export interface HubMemory {
  /**
   * VmRSS (summed over the hub's processes) before a GC is forced, in bytes: what `top` shows. The
   * idle reading is taken after the forced GCs (so it equals `rss` there): every hub starts from
   * its collected idle state, and the loaded figure minus it is what the connections added without
   * any GC forced since.
   */
  rssNoGc: number;
  /** VmRSS after a forced full GC (the same as rssNoGc for a hub without GC), in bytes. */
  rss: number;
  /** Live heap after that GC: V8 heapUsed for Node hubs, HeapAlloc for Go. */
  heap: number | undefined;
  /**
   * Node hubs, after that GC: memory outside the V8 heap (`external`) and the part of it in
   * ArrayBuffers (`arrayBuffers`: Buffers, sockets' and broker clients' read buffers).
   */
  external?: { external: number; arrayBuffers: number };
  /**
   * VmRSS after V8's memory-reducing GC, which also shrinks the young generation that a plain GC
   * leaves as large as the last allocation burst grew it (Node hubs; the same as `rss` for others).
   */
  reducedRss: number;
}

export interface RunningHub {
  transport: PushTransport;
  port: number;
  /** Several replicas behind no balancer: connection i goes to ports[i % ports.length]. */
  ports?: number[];
  gc: GcKind;
  /** Connect paths; client connection i uses paths[i % paths.length]. */
  paths: string[];
  /** How clients reach `port` (default: raw `net` sockets, `tcp`). */
  wire?: PushWire;
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
/**
 * The embedded runner as the image starts it: built JavaScript (tools/build.ts; built before the hub
 * starts when missing or older than its sources) with source maps. `source: true` runs the
 * TypeScript through Node's type stripping instead.
 */
const embeddedBuilt = `${root}embedded/dist/main.js`;
const embeddedSource = `${root}embedded/src/main.ts`;
const rawSseHub = fileURLToPath(new URL('../baselines/raw-sse-hub.ts', import.meta.url));
const rawWsHub = fileURLToPath(new URL('../baselines/raw-ws-hub.ts', import.meta.url));

/**
 * Node options a push hub is started with where users start one (the chart's pushHub.nodeArgs,
 * docker-compose, the image's default command, `make run`): a young generation of 8 MiB semi-spaces.
 */
export const HUB_NODE_ARGS = ['--max-semi-space-size=8'];

export const GATEHOUSE_SSE_PATH = '/_gw/v1/connection/sse';
export const GATEHOUSE_WS_PATH = '/_gw/v1/connection/ws';

export function subscriptionPath(base: string, subscriptions: unknown[]): string {
  return `${base}?subscriptions=${encodeURIComponent(JSON.stringify(subscriptions))}`;
}

/** `nodeArgs`: e.g. HUB_NODE_ARGS, for a row on the V8 settings Gatehouse's hub runs with. */
export function rawHub(transport: PushTransport, port: number, cpu: number, nodeArgs?: string[]): HubTarget {
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
        ...(nodeArgs && { nodeArgs }),
      });
      return nodeHub(p, {
        transport,
        port,
        paths: [transport === 'sse' ? '/sse' : '/ws'],
        publish: (json) => post(port, '/publish', json, 'application/json'),
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
  /** Extra settings (e.g. JWT_SECRET_KEY, JWT_ALG). */
  env?: Record<string, string>;
  /**
   * The runner to start (default: this checkout's embedded runner, built first when missing or
   * stale); another checkout's for before/after rows, which that checkout must have built.
   */
  main?: string;
  /** Run the TypeScript sources (type stripping) instead of the built JavaScript. */
  source?: boolean;
  /**
   * Clients connect to the edge's TLS listener on this port instead (HTTPS_CERTFILE/HTTPS_KEYFILE,
   * a self-signed certificate made at start): HTTP/1.1 through node:https, or HTTP/2 through
   * node:http2 with `streamsPerSession` SSE streams per session.
   */
  tls?: { port: number; protocol: 'http/1.1' } | { port: number; protocol: 'h2'; streamsPerSession: number };
}

export function gatehouseHub(o: GatehouseOptions): HubTarget {
  const base = o.transport === 'sse' ? GATEHOUSE_SSE_PATH : GATEHOUSE_WS_PATH;
  return {
    name: o.name ?? `gatehouse-${o.transport}`,
    transport: o.transport,
    async start() {
      // This checkout's built JavaScript, built first when a file is missing or older than its source.
      if (!o.source && (o.main === undefined || o.main.startsWith(root))) await ensureBuilt();
      const cert = o.tls ? selfSignedCertificate() : undefined;
      const port = o.tls?.port ?? o.port;
      const p = await spawnPinned({
        name: 'gatehouse',
        script: o.main ?? (o.source ? embeddedSource : embeddedBuilt),
        port,
        cpu: o.cpu,
        probe: true,
        nodeArgs: [...(o.source ? [] : ['--enable-source-maps']), ...HUB_NODE_ARGS, ...(o.nodeArgs ?? [])],
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
          // Every benchmark client connects from this machine.
          MAX_CONNECTIONS_PER_IP_PER_MINUTE: '1000000',
          MAX_CONNECTIONS_PER_ADDRESS: '1000000',
          MAX_CONNECTIONS: '1000000',
          // Keeps heartbeat comments and pings (a 10k-write loop each) out of every measurement
          // window; the raw client does not answer pings.
          HEARTBEAT_INTERVAL: '10m',
          ...(o.extractors ? { EXTRACTORS: o.extractors } : {}),
          ...o.env,
          ...(cert && {
            HTTPS_CERTFILE: cert.certFile,
            HTTPS_KEYFILE: cert.keyFile,
            INBOUND_HTTPS_PORT: String(port),
          }),
        },
      });
      const hub = nodeHub(p, {
        transport: o.transport,
        port,
        paths: o.paths ?? [subscriptionPath(base, [{ eventType: 'bench' }])],
        publish: (json) => post(o.apiPort, '/v3/messages', json, 'application/cloudevents+json'),
        ...(cert && o.tls && { wire: tlsWire(o.tls, readFileSync(cert.certFile, 'utf8')) }),
      });
      if (!cert) return hub;
      return {
        ...hub,
        async stop() {
          await hub.stop();
          rmSync(dirname(cert.certFile), { recursive: true, force: true });
        },
      };
    },
  };
}

function tlsWire(tls: NonNullable<GatehouseOptions['tls']>, ca: string): PushWire {
  return tls.protocol === 'h2'
    ? { protocol: 'tls/h2', ca, streamsPerSession: tls.streamsPerSession }
    : { protocol: 'tls/http/1.1', ca };
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
        gc: 'none',
        paths: ['/stream'],
        publish: (json) => hub.publish(`event: bench\ndata: ${json}\n\n`),
        memory: async () => noGcMemory(hub.rssBytes()),
        cpuSeconds: () => hub.cpuSeconds(),
        pids: () => hub.pids(),
        stop: () => hub.stop(),
      };
    },
  };
}

/** Nchan (nginx + libnginx-mod-nchan, one worker): src/baselines/nchan-hub.ts. */
export function nchanHub(port: number, cpu: number, maxConnections: number): HubTarget {
  return {
    name: 'nchan',
    transport: 'sse',
    async start() {
      const hub = await startNchan({ port, cpu, maxConnections });
      return {
        transport: 'sse',
        port,
        gc: 'none',
        paths: [NCHAN_SUBSCRIBE_PATH],
        publish: (json) => hub.publish(json),
        memory: async () => noGcMemory(hub.rssBytes()),
        cpuSeconds: () => hub.cpuSeconds(),
        pids: () => hub.pids(),
        stop: () => hub.stop(),
      };
    },
  };
}

/** Centrifugo v6, uni_sse, GOMAXPROCS=1: src/baselines/centrifugo-hub.ts. */
export function centrifugoHub(port: number, cpu: number): HubTarget {
  return {
    name: 'centrifugo',
    transport: 'sse',
    async start() {
      const hub = await startCentrifugo({ port, cpu });
      return {
        transport: 'sse',
        port,
        gc: 'go',
        paths: [CENTRIFUGO_SSE_PATH],
        publish: (json) => hub.publish(json),
        async memory(when) {
          const rssNoGc = hub.rssBytes();
          const heap = await hub.gc();
          const rss = hub.rssBytes();
          return { rssNoGc: when === 'idle' ? rss : rssNoGc, rss, heap, reducedRss: rss };
        },
        cpuSeconds: () => hub.cpuSeconds(),
        pids: () => [hub.pid],
        stop: () => hub.stop(),
      };
    },
  };
}

/** A hub without a garbage collector: every reading is the same VmRSS. */
function noGcMemory(rss: number): HubMemory {
  return { rssNoGc: rss, rss, heap: undefined, reducedRss: rss };
}

function nodeHub(
  p: PinnedProcess,
  o: Pick<RunningHub, 'transport' | 'port' | 'paths' | 'publish' | 'wire'>,
): RunningHub {
  return {
    ...o,
    gc: 'node',
    async memory(when) {
      if (when === 'idle') {
        await p.memoryAfterGc(true);
        const reducedRss = p.rssBytes();
        const { heapUsed, external, arrayBuffers } = await p.memoryAfterGc();
        const rss = p.rssBytes();
        return { rssNoGc: rss, rss, heap: heapUsed, reducedRss, external: { external, arrayBuffers } };
      }
      const rssNoGc = p.rssBytes();
      const { heapUsed, external, arrayBuffers } = await p.memoryAfterGc();
      const rss = p.rssBytes();
      await p.memoryAfterGc(true);
      return { rssNoGc, rss, heap: heapUsed, reducedRss: p.rssBytes(), external: { external, arrayBuffers } };
    },
    cpuSeconds: () => cpuNanosOf(p.child.pid!) / 1e9,
    statCpuSeconds: () => p.cpuSeconds(),
    pids: () => (p.child.pid === undefined ? [] : [p.child.pid, ...descendantsOf(p.child.pid)]),
    stop: () => p.stop(),
  };
}
