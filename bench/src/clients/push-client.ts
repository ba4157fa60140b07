/**
 * The push client process (performance-anchors §6.4): started by push-client-process.ts and pinned
 * to the load CPU, it opens N raw connections in paced batches, reports once all answered, and
 * reports the publish-to-arrival latency of every delivery of an event when asked. Commands and
 * reports are the IPC messages of push-client-messages.ts.
 */
import type { Socket } from 'node:net';
import type {
  ArrivalsReport,
  AwaitCommand,
  ClientCommand,
  ClientReport,
  ConnectCommand,
} from './push-client-messages.ts';
import { openRawConnection } from './raw-connection.ts';

const sockets: Socket[] = [];
let open = 0;
/** Latencies by event stamp, until reported. */
const arrivals = new Map<number, number[]>();
const awaiting = new Map<number, { expected: number; toEveryOpen: boolean; timer: NodeJS.Timeout }>();
const reported = new Set<number>();
let extra = 0;

function send(report: ClientReport): void {
  process.send!(report);
}

function onStamp(stamp: number, arrivedAt: number): void {
  if (reported.has(stamp)) {
    extra++;
    return;
  }
  let list = arrivals.get(stamp);
  if (!list) {
    list = [];
    arrivals.set(stamp, list);
  }
  list.push(arrivedAt - stamp);
  checkComplete(stamp);
}

function checkComplete(stamp: number): void {
  const waiter = awaiting.get(stamp);
  if (!waiter) return;
  const expected = waiter.toEveryOpen ? Math.min(waiter.expected, open) : waiter.expected;
  if ((arrivals.get(stamp)?.length ?? 0) >= expected) report(stamp);
}

function report(stamp: number): void {
  const waiter = awaiting.get(stamp);
  if (waiter) clearTimeout(waiter.timer);
  awaiting.delete(stamp);
  reported.add(stamp);
  const latenciesMs = arrivals.get(stamp) ?? [];
  arrivals.delete(stamp);
  const message: ArrivalsReport = { type: 'arrivals', stamp, latenciesMs, open, extra };
  send(message);
}

function awaitArrivals(cmd: AwaitCommand): void {
  awaiting.set(cmd.stamp, {
    expected: cmd.expected,
    toEveryOpen: cmd.toEveryOpen,
    timer: setTimeout(() => report(cmd.stamp), cmd.timeoutMs),
  });
  checkComplete(cmd.stamp);
}

/**
 * A connection the hub reset or refused before it answered is opened again on a later tick, as a
 * browser's EventSource or a WebSocket client library would, at most this many times in all; the
 * report counts the retries (a loaded hub drops some of a 500-per-20-ms connect burst).
 */
const connectAttempts = 3;

function connectAll(cmd: ConnectCommand): void {
  const started = performance.now();
  let next = 0;
  let pending = 0;
  let connected = 0;
  let failed = 0;
  let retried = 0;
  let firstError: string | undefined;
  let done = false;
  /** Connections that failed before they opened, to be opened again (at most `connectAttempts` in all). */
  const retries: Array<{ index: number; attempt: number }> = [];
  const finish = () => {
    if (done) return;
    done = true;
    clearInterval(tick);
    clearTimeout(deadline);
    send({ type: 'connected', connected, failed, retried, ms: performance.now() - started, firstError });
  };
  const settled = () => {
    if (connected + failed === cmd.count) finish();
  };
  const open1 = (index: number, attempt: number) => {
    pending++;
    const path = cmd.paths[index % cmd.paths.length]!;
    const socket = openRawConnection(
      index,
      { transport: cmd.transport, port: cmd.ports?.[index % cmd.ports.length] ?? cmd.port, path },
      {
        onOpen() {
          pending--;
          connected++;
          open++;
          settled();
        },
        onClose(opened, reason) {
          if (opened) {
            open--;
            // A connection that closed will not deliver: an event to every connection may be complete now.
            for (const stamp of [...awaiting.keys()]) checkComplete(stamp);
            return;
          }
          pending--;
          firstError ??= reason;
          if (attempt < connectAttempts) {
            retried++;
            retries.push({ index, attempt: attempt + 1 });
            return;
          }
          failed++;
          settled();
        },
        onStamp,
      },
    );
    sockets.push(socket);
  };
  const startBatch = () => {
    let room = Math.min(cmd.batchSize, cmd.maxPending - pending);
    while (room > 0 && retries.length > 0) {
      const r = retries.shift()!;
      open1(r.index, r.attempt);
      room--;
    }
    for (; room > 0 && next < cmd.count; room--, next++) open1((cmd.firstIndex ?? 0) + next, 1);
    if (next === cmd.count && retries.length === 0 && pending === 0) clearInterval(tick);
  };
  const tick = setInterval(startBatch, cmd.batchIntervalMs);
  const deadline = setTimeout(() => {
    firstError ??= `only ${connected} of ${cmd.count} connected within ${cmd.timeoutMs} ms`;
    finish();
  }, cmd.timeoutMs);
  startBatch();
}

async function closeAll(): Promise<void> {
  const closing = sockets.map(
    (s) => new Promise<void>((resolve) => (s.destroyed ? resolve() : s.once('close', () => resolve()))),
  );
  for (const s of sockets) s.destroy();
  await Promise.all(closing);
  sockets.length = 0;
  arrivals.clear();
  reported.clear();
  extra = 0;
  send({ type: 'closed' });
}

process.on('message', (cmd: ClientCommand) => {
  if (cmd.type === 'connect') connectAll(cmd);
  else if (cmd.type === 'await') awaitArrivals(cmd);
  else void closeAll();
});
// The orchestrator went away: nothing left to measure for.
process.on('disconnect', () => process.exit(0));
