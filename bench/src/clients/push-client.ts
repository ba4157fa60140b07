/**
 * The push client process (performance-anchors §6.4): started by push-client-process.ts and pinned
 * to the load CPU, it opens N connections in paced batches (raw sockets, or HTTPS / HTTP/2 streams
 * for the TLS rows), reports once all answered, and reports the publish-to-arrival latency of every
 * delivery of an event when asked. Commands and reports are the IPC messages of
 * push-client-messages.ts.
 */
import { H2SseSessions } from './h2-sse-sessions.ts';
import { openHttpsSseConnection } from './https-sse-connection.ts';
import type {
  ArrivalsReport,
  AwaitCommand,
  ClientCommand,
  ClientReport,
  ConnectCommand,
  NegotiatedProtocol,
} from './push-client-messages.ts';
import { type ConnectionEvents, openRawConnection } from './raw-connection.ts';

/** A socket, an HTTPS request or an HTTP/2 session: what closeAll ends. */
interface Closable {
  readonly destroyed: boolean;
  destroy(): void;
  once(event: 'close', listener: () => void): unknown;
}

const closables: Closable[] = [];
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

type Opener = (index: number, target: { port: number; path: string }, events: ConnectionEvents) => void;

/** Opens connection i the way the command's wire says. */
function openerFor(cmd: ConnectCommand): Opener {
  const wire = cmd.wire ?? { protocol: 'tcp' };
  if (wire.protocol === 'tcp')
    return (i, target, events) =>
      closables.push(
        openRawConnection(i, { transport: cmd.transport, extraHeaders: cmd.extraHeaders, ...target }, events),
      );
  if (cmd.transport !== 'sse') throw new Error(`${wire.protocol} carries SSE only`);
  if (wire.protocol === 'tls/http/1.1')
    return (i, target, events) =>
      closables.push(openHttpsSseConnection(i, { ...target, ca: wire.ca }, events));
  const sessions = new H2SseSessions(wire, (session) => closables.push(session));
  return (i, target, events) => sessions.openStream(i, target, events);
}

function connectAll(cmd: ConnectCommand): void {
  const openConnection = openerFor(cmd);
  const started = performance.now();
  let next = 0;
  let pending = 0;
  let connected = 0;
  let failed = 0;
  let retried = 0;
  let firstError: string | undefined;
  const protocols: Partial<Record<NegotiatedProtocol, number>> = {};
  let done = false;
  /** Connections that failed before they opened, to be opened again (at most `connectAttempts` in all). */
  const retries: Array<{ index: number; attempt: number }> = [];
  const finish = () => {
    if (done) return;
    done = true;
    clearInterval(tick);
    clearTimeout(deadline);
    send({
      type: 'connected',
      connected,
      failed,
      retried,
      ms: performance.now() - started,
      firstError,
      protocols,
    });
  };
  const settled = () => {
    if (connected + failed === cmd.count) finish();
  };
  const open1 = (index: number, attempt: number) => {
    pending++;
    const path = cmd.paths[index % cmd.paths.length]!;
    openConnection(
      index,
      { port: cmd.ports?.[index % cmd.ports.length] ?? cmd.port, path },
      {
        onOpen(protocol) {
          pending--;
          connected++;
          protocols[protocol] = (protocols[protocol] ?? 0) + 1;
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
  const closing = closables.map(
    (c) => new Promise<void>((resolve) => (c.destroyed ? resolve() : c.once('close', () => resolve()))),
  );
  for (const c of closables) c.destroy();
  await Promise.all(closing);
  closables.length = 0;
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
