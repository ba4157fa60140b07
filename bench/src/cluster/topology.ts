/**
 * The cluster under test: K push-hub replicas and one publisher, each its own process running this
 * checkout's built JavaScript (`services/<name>/dist/main.js`, built first when stale), on a fresh
 * fan-out topic of the Kafka and the Redis that `tools/deps.sh` (make deps-up) runs. Not pinned:
 * on a two-core box the replicas, the publisher, the brokers and the clients share both cores, as
 * they would share a node's. Also finds the brokers' processes (whoever listens on their ports) so
 * their CPU is read with everyone else's.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { signJwt } from '@gatehouse/auth';
import { KafkaBus } from '@gatehouse/bus/all';
import { scanKeys } from '@gatehouse/store/redis';
import { dependencyAddress, gatewayEnv, type ServiceProcess, spawnService } from '@gatehouse/testkit';
import { Redis } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import { ensureBuilt } from '../../../tools/build.ts';
import { cpuNanosOf, fdLimitsOf, rssBytesOf } from '../harness/proc.ts';
import { HUB_NODE_ARGS } from '../push-hub/hub-targets.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const hubMain = `${root}services/push-hub/dist/main.js`;
const publisherMain = `${root}services/publisher/dist/main.js`;

export const JWT_SECRET = 'cluster-bench-secret-long-enough-for-hs256';

/** The HS256 token the clients with a JWT send, valid for two hours. */
export function clusterJwt(): string {
  return signJwt(
    { username: 'cluster', exp: Math.floor(Date.now() / 1000) + 7200 },
    { alg: 'HS256', key: JWT_SECRET },
  );
}

export interface Replica {
  name: string;
  service: ServiceProcess;
  port: number;
  killed: boolean;
}

export interface Cluster {
  run: string;
  /** The fan-out topic of this run (FANOUT_TOPIC of every replica and the publisher). */
  fanoutTopic: string;
  replicas: Replica[];
  publisher: ServiceProcess;
  publisherUrl: string;
  /** SIGKILL, then waits for the exit. */
  kill(replica: Replica): Promise<void>;
  stop(): Promise<void>;
}

export async function startCluster(
  replicaCount: number,
  maxConnections: number,
  /** Settings of every replica on top of the bench's (e.g. LONGPOLL_TIMEOUT). */
  hubEnv: Record<string, string> = {},
): Promise<Cluster> {
  await ensureBuilt({ log: (line) => console.log(line) });
  const run = `cluster-${Date.now().toString(36)}`;
  const env: Record<string, string> = {
    ...gatewayEnv({ run, jwtSecret: JWT_SECRET }),
    LOG_LEVEL: 'warn',
    // Every client connects from this machine, and a killed replica's clients all come back at
    // once: the connect limits must not shape the run (they have tests of their own).
    MAX_CONNECTIONS_PER_MINUTE: '10000000',
    MAX_RECONNECTS_PER_MINUTE: '10000000',
    MAX_CONNECTIONS_PER_IP_PER_MINUTE: '10000000',
    MAX_CONNECTIONS_PER_ADDRESS: '10000000',
    MAX_CONNECTIONS: String(maxConnections),
  };
  const topic = env['FANOUT_TOPIC']!;
  const bus = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: `${run}-admin` });
  await bus.ensureTopic(topic, 1);
  await bus.close();
  const started: ServiceProcess[] = [];
  const stopAll = async () => {
    await Promise.allSettled(started.map((s) => s.stop(10_000)));
    await cleanUp(run, topic);
  };
  try {
    const spawn = (name: string, entry: string, extra: Record<string, string>, nodeArgs: string[]) =>
      spawnService({
        entry,
        name,
        publicPort: true,
        nodeArgs: ['--enable-source-maps', ...nodeArgs],
        env: { ...env, ...extra },
        readyTimeoutMs: 120_000,
      }).then((s) => {
        started.push(s);
        return s;
      });
    const publisher = await spawn(
      'publisher',
      publisherMain,
      { KAFKA_SOURCE_TOPICS: '', NATS_SOURCE_TOPICS: '' },
      [],
    );
    // Two at a time: eight Node processes starting at once on two cores take their time.
    const services: ServiceProcess[] = [];
    for (let i = 0; i < replicaCount; i += 2)
      services.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(2, replicaCount - i) }, (_, k) =>
            spawn(`hub-${i + k}`, hubMain, { ...hubEnv, REPLICA_ID: `${run}-hub-${i + k}` }, HUB_NODE_ARGS),
          ),
        )),
      );
    const replicas = services.map((service, i) => ({
      name: `hub-${i}`,
      service,
      port: Number(new URL(service.publicUrl!).port),
      killed: false,
    }));
    return {
      run,
      fanoutTopic: topic,
      replicas,
      publisher,
      publisherUrl: publisher.publicUrl!,
      async kill(replica) {
        replica.killed = true;
        process.kill(replica.service.pid, 'SIGKILL');
        await replica.service.exited;
      },
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** The run's topic and keys go with it (thousands of long-poll records would otherwise expire later, all at once). */
async function cleanUp(run: string, topic: string): Promise<void> {
  const kafka = new Kafka({
    brokers: dependencyAddress.kafkaBrokers,
    clientId: `${run}-cleanup`,
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    await admin.deleteTopics({ topics: [topic], timeout: 10_000 });
  } catch {
    // left for the broker's retention
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
  const redis = new Redis(dependencyAddress.redisUrl);
  try {
    const keys = await scanKeys(redis, `${run}:*`);
    for (let i = 0; i < keys.length; i += 1000) await redis.unlink(...keys.slice(i, i + 1000));
  } finally {
    redis.disconnect();
  }
}

/** The process listening on TCP `port` (any local address), from /proc/net/tcp{,6} and every process's descriptors. */
export function listenerPid(port: number): number | undefined {
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== '0A') continue;
      if (Number.parseInt(f[1]!.split(':')[1]!, 16) === port) inodes.add(f[9]!);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${entry}/fd/${fd}`));
        if (m && inodes.has(m[1]!)) return Number(entry);
      } catch {
        // closed while we looked
      }
    }
  }
  return undefined;
}

/** Kafka's and Redis's processes (undefined when not found: their CPU is then not counted). */
export function brokerPids(): { kafka: number | undefined; redis: number | undefined } {
  const kafkaPort = Number(dependencyAddress.kafkaBrokers[0]!.split(':').at(-1));
  const redisPort = Number(new URL(dependencyAddress.redisUrl).port || 6379);
  return { kafka: listenerPid(kafkaPort), redis: listenerPid(redisPort) };
}

/** CPU seconds of a process (every thread, schedstat), 0 once it is gone. */
export function cpuOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    return cpuNanosOf(pid) / 1e9;
  } catch {
    return 0;
  }
}

export function rssOf(pid: number): number {
  try {
    return rssBytesOf(pid);
  } catch {
    return 0;
  }
}

/** Connections one replica may hold: its open-files limit less the service's own reserve and a margin. */
export function connectionsPerProcessLimit(): number {
  return fdLimitsOf(process.pid).soft - 256 - 244;
}
