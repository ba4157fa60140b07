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
