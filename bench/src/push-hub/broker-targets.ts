/**
 * H3 with the broker in the loop (issue 16): what users run, publisher → broker → hub replicas.
 * Two push hub processes and one publisher process (services/*\/src/main.ts) share a fan-out topic
 * on Kafka, Redis streams or NATS JetStream (the servers of tools/deps.sh, ports from the
 * environment), or on the Kafka of tools/tls-deps.sh over SASL_SSL with SCRAM-SHA-512
 * (`kafka-tls`: what managed Kafka costs next to plaintext, same run); the client spreads its connections over both hubs (no balancer: connection i goes
 * to hub i mod 2); an event is published with `POST /v3/messages` on the publisher's API port.
 *
 * Pinning: both hubs, the publisher and the fan-out broker's process run on the server CPU, as the
 * embedded runner of H3 does on the memory bus, so the broker hop's latency is compared on the
 * same CPU budget (the broker's CPU mask is given back when the hub stops). Server CPU per delivery
 * counts the hubs and the publisher, not the broker.
 *
 * Latency settings: the defaults, which are already chosen for latency, so nothing is set here:
 * - Kafka: the publisher's batcher sends a lone publish at once (no linger: kafkajs has none, and
 *   the adapter waits only for publishes made in the same tick); acks from all in-sync replicas (one
 *   broker here); the hubs' consumers fetch with minBytes 1, so the broker answers a waiting fetch
 *   as soon as the record is appended; `maxWaitTimeInMs` (1 s) only bounds a fetch that finds nothing.
 * - Redis: XADD, read by each hub with XREAD BLOCK from its last id, which returns at the append.
 * - NATS: a JetStream publish (acknowledged once stored), read by an ordered push-style consumer.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Bus, KafkaBus, NatsBus, RedisBus } from '@gatehouse/bus/all';
import {
  dependencyAddress,
  gatewayEnv,
  kafkaOverSaslSettings,
  tlsDependencyAddress,
} from '@gatehouse/testkit';
import { cpuNanosOf, descendantsOf, pinProcess } from '../harness/proc.ts';
import { type PinnedProcess, spawnPinned } from '../harness/spawn-pinned.ts';
import {
  GATEHOUSE_SSE_PATH,
  HUB_NODE_ARGS,
  type HubTarget,
  type RunningHub,
  subscriptionPath,
} from './hub-targets.ts';
import { post } from './publish.ts';

export type BrokerKind = 'kafka' | 'kafka-tls' | 'redis' | 'nats';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const hubMain = `${root}services/push-hub/src/main.ts`;
const publisherMain = `${root}services/publisher/src/main.ts`;

/** The hubs' and publisher's settings for the TLS broker: SASL_SSL, SCRAM-SHA-512, the test CA. */
const kafkaOverTls = kafkaOverSaslSettings('scram-sha-512');

export interface BrokerPorts {
  hubs: [number, number];
  hubApis: [number, number];
  publisherApi: number;
  publisherInbound: number;
}

/** The broker's process as tools/deps.sh started it (its PID file), or undefined. */
export function brokerPid(kind: BrokerKind): number | undefined {
  try {
    const pid = Number(readFileSync(`${root}.cache/deps/${kind}/pid`, 'utf8').trim());
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

function adminBus(kind: BrokerKind, keyPrefix: string): Promise<Bus> {
  if (kind === 'redis') return RedisBus.connect({ url: dependencyAddress.redisUrl, keyPrefix });
  if (kind === 'nats') return NatsBus.connect({ servers: dependencyAddress.natsUrl });
  if (kind === 'kafka-tls') {
    const { kafkaSaslBrokers, caFile, user, password } = tlsDependencyAddress;
    return Promise.resolve(
      new KafkaBus({
        brokers: [kafkaSaslBrokers],
        clientId: 'bench-h3-admin',
        ssl: { ca: readFileSync(caFile, 'utf8') },
        sasl: { mechanism: 'scram-sha-512', username: user, password },
      }),
    );
  }
  return Promise.resolve(
    new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: 'bench-h3-admin' }),
  );
}

async function untilReady(apiPort: number, name: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`http://127.0.0.1:${apiPort}/ready`, { signal: AbortSignal.timeout(2000) });
      last = `${res.status}`;
      if (res.status === 200) return;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${name} not ready within 60 s (${last})`);
}

export function brokerHub(kind: BrokerKind, ports: BrokerPorts, cpu: number): HubTarget {
  return {
    name: `gatehouse-sse-${kind}`,
    transport: 'sse',
    async start() {
      const run = `bench-h3-${kind}-${Date.now().toString(36)}`;
      const env: Record<string, string> = {
        ...gatewayEnv({
          run,
          fanout: kind === 'kafka-tls' ? 'kafka' : kind,
          jwtSecret: 'bench-h3-secret-long-enough-for-hs256',
        }),
        ...(kind === 'kafka-tls' && kafkaOverTls),
        LOG_LEVEL: 'warn',
        // As in H3 on the memory bus: no connect-rate refusals, no heartbeat loop in a measurement.
        MAX_CONNECTIONS_PER_MINUTE: '1000000',
        // Every benchmark client connects from this machine.
        MAX_CONNECTIONS_PER_IP_PER_MINUTE: '1000000',
        MAX_CONNECTIONS_PER_ADDRESS: '1000000',
        MAX_CONNECTIONS: '1000000',
        HEARTBEAT_INTERVAL: '10m',
      };
      const topic = env['FANOUT_TOPIC']!;
      const bus = await adminBus(kind, env['STORE_KEY_PREFIX']!);
      await bus.createTopic?.(topic);
      const broker = brokerPid(kind);
      if (broker !== undefined) pinProcess(broker, cpu);
      const started: PinnedProcess[] = [];
      const stopAll = async () => {
        await Promise.allSettled(started.map((p) => p.stop()));
        if (broker !== undefined) pinProcess(broker, '0-1');
        await bus.deleteTopic?.(topic).catch(() => undefined);
        await bus.close();
      };
      try {
        for (const i of [0, 1] as const) {
          started.push(
            await spawnPinned({
              name: `hub ${i} (${kind})`,
              script: hubMain,
              port: ports.hubs[i],
              cpu,
              probe: true,
              nodeArgs: HUB_NODE_ARGS,
              env: {
                ...env,
                HOST: '127.0.0.1',
                INBOUND_PORT: String(ports.hubs[i]),
                API_PORT: String(ports.hubApis[i]),
              },
            }),
          );
        }
        const publisher = await spawnPinned({
          name: `publisher (${kind})`,
          script: publisherMain,
          port: ports.publisherApi,
          cpu,
          env: {
            ...env,
            HOST: '127.0.0.1',
            INBOUND_PORT: String(ports.publisherInbound),
            API_PORT: String(ports.publisherApi),
          },
        });
        started.push(publisher);
        await Promise.all([
          untilReady(ports.hubApis[0], 'hub 0'),
          untilReady(ports.hubApis[1], 'hub 1'),
          untilReady(ports.publisherApi, 'publisher'),
        ]);
      } catch (err) {
        await stopAll();
        throw err;
      }
      const hubs = started.slice(0, 2);
      const servers = started;
      const sumOver = (ps: PinnedProcess[], f: (p: PinnedProcess) => number) =>
        ps.reduce((a, p) => a + f(p), 0);
      const hub: RunningHub = {
        transport: 'sse',
        port: ports.hubs[0],
        ports: [...ports.hubs],
        gc: 'node',
        paths: [subscriptionPath(GATEHOUSE_SSE_PATH, [{ eventType: 'bench' }])],
        publish: (json) => post(ports.publisherApi, '/v3/messages', json, 'application/cloudevents+json'),
        async memory(when) {
          const rssNoGc = sumOver(hubs, (p) => p.rssBytes());
          const reduceFirst = when === 'idle';
          if (reduceFirst) await Promise.all(hubs.map((p) => p.memoryAfterGc(true)));
          const reducedIdle = sumOver(hubs, (p) => p.rssBytes());
          const heaps = await Promise.all(hubs.map((p) => p.memoryAfterGc()));
          const rss = sumOver(hubs, (p) => p.rssBytes());
          // Idle: the collected state is the starting point of both readings (hub-targets.ts HubMemory).
          if (reduceFirst)
            return {
              rssNoGc: rss,
              rss,
              heap: heaps.reduce((a, m) => a + m.heapUsed, 0),
              reducedRss: reducedIdle,
            };
          if (!reduceFirst) await Promise.all(hubs.map((p) => p.memoryAfterGc(true)));
          const reducedRss = reduceFirst ? reducedIdle : sumOver(hubs, (p) => p.rssBytes());
          return { rssNoGc, rss, heap: heaps.reduce((a, m) => a + m.heapUsed, 0), reducedRss };
        },
        cpuSeconds: () => sumOver(servers, (p) => cpuNanosOf(p.child.pid!)) / 1e9,
        pids: () =>
          servers.flatMap((p) =>
            p.child.pid === undefined ? [] : [p.child.pid, ...descendantsOf(p.child.pid)],
          ),
        stop: stopAll,
      };
      return hub;
    },
  };
}
