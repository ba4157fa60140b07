/**
 * The orchestrator's handle on the push client process: forks push-client.ts, pins it to the load
 * CPU (§6.1 rule 2) and turns its IPC reports into promises. One command is outstanding at a time.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { cpuNanosOf, pinProcess } from '../harness/proc.ts';
import type {
  ArrivalsReport,
  ClientCommand,
  ClientReport,
  ConnectCommand,
  ConnectedReport,
} from './push-client-messages.ts';

export interface PushClient {
  pid: number;
  connect(plan: Omit<ConnectCommand, 'type'>): Promise<ConnectedReport>;
  /**
   * The deliveries of the event stamped `stamp`, once `expected` arrived (or, with `toEveryOpen`, one
   * per connection still open) or after `timeoutMs`.
   */
  arrivals(stamp: number, expected: number, toEveryOpen: boolean, timeoutMs: number): Promise<ArrivalsReport>;
  /** Closes every connection and waits until they are closed. */
  closeAll(): Promise<void>;
  cpuSeconds(): number;
  stop(): Promise<void>;
}

const script = fileURLToPath(new URL('./push-client.ts', import.meta.url));

export function startPushClient(cpu: number): PushClient {
  const child = fork(script, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  pinProcess(child.pid!, cpu);
  return {
    pid: child.pid!,
    connect: (plan) =>
      ask<ConnectedReport>(child, { type: 'connect', ...plan }, (r) => r.type === 'connected'),
    arrivals: (stamp, expected, toEveryOpen, timeoutMs) =>
      ask<ArrivalsReport>(
        child,
        { type: 'await', stamp, expected, toEveryOpen, timeoutMs },
        (r) => r.type === 'arrivals' && r.stamp === stamp,
      ),
    closeAll: () => ask(child, { type: 'close' }, (r) => r.type === 'closed').then(() => undefined),
    cpuSeconds: () => cpuNanosOf(child.pid!) / 1e9,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await exited;
    },
  };
}

function ask<T extends ClientReport>(
  child: ChildProcess,
  command: ClientCommand,
  isAnswer: (r: ClientReport) => boolean,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (r: ClientReport) => {
      if (!isAnswer(r)) return;
      cleanup();
      resolve(r as T);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`push client exited (${code}) while waiting for ${command.type}`));
    };
    const cleanup = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send(command);
  });
}

/**
 * Several client processes as one (for more connections than one process may hold open): connects
 * split N evenly and pace each share at 1/k of the batch size, so the total rate is unchanged;
 * arrivals are merged. Only events to every connection can be awaited (a filtered event's expected
 * count per process is not known), which is all a fan-out session asks.
 */
export function startPushClients(count: number, cpu: number): PushClient {
  if (count === 1) return startPushClient(cpu);
  const clients = Array.from({ length: count }, () => startPushClient(cpu));
  return {
    pid: clients[0]!.pid,
    async connect(plan) {
      const share = (k: number) => Math.floor(plan.count / count) + (k < plan.count % count ? 1 : 0);
      let firstIndex = 0;
      const reports = await Promise.all(
        clients.map((c, k) => {
          const mine = { ...plan, count: share(k), firstIndex };
          firstIndex += mine.count;
          return c.connect({
            ...mine,
            batchSize: Math.max(1, Math.ceil(plan.batchSize / count)),
            maxPending: Math.max(1, Math.ceil(plan.maxPending / count)),
          });
        }),
      );
      return {
        type: 'connected',
        connected: reports.reduce((a, r) => a + r.connected, 0),
        failed: reports.reduce((a, r) => a + r.failed, 0),
        retried: reports.reduce((a, r) => a + r.retried, 0),
        ms: Math.max(...reports.map((r) => r.ms)),
        firstError: reports.find((r) => r.firstError)?.firstError,
        protocols: mergeCounts(reports.map((r) => r.protocols)),
      };
    },
    async arrivals(stamp, expected, toEveryOpen, timeoutMs) {
      if (!toEveryOpen) throw new Error('several client processes can only await events to every connection');
      const reports = await Promise.all(clients.map((c) => c.arrivals(stamp, expected, true, timeoutMs)));
      return {
        type: 'arrivals',
        stamp,
        latenciesMs: reports.flatMap((r) => r.latenciesMs),
        open: reports.reduce((a, r) => a + r.open, 0),
        extra: reports.reduce((a, r) => a + r.extra, 0),
      };
    },
    closeAll: () => Promise.all(clients.map((c) => c.closeAll())).then(() => undefined),
    cpuSeconds: () => clients.reduce((a, c) => a + c.cpuSeconds(), 0),
    stop: () => Promise.all(clients.map((c) => c.stop())).then(() => undefined),
  };
}

function mergeCounts<K extends string>(
  counts: Array<Partial<Record<K, number>>>,
): Partial<Record<K, number>> {
  const sum: Partial<Record<K, number>> = {};
  for (const c of counts)
    for (const [k, v] of Object.entries(c) as Array<[K, number]>) sum[k] = (sum[k] ?? 0) + v;
  return sum;
}
