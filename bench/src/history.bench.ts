/**
 * What history and rewind cost a hub replica (issue 37): a connect with `rewind=100` against a plain
 * one, and a history page of 100 from the event buffer and from the broker past it.
 *
 * Set-up: a real Hub and EventRing of EVENT_BUFFER_SIZE's default (10,000 events of ~300 bytes, one
 * in 50 of the subscribed type, with a constraint on an extractor field that every other event of
 * the type matches), filled through `dispatch` as the fan-out consumer does; 1,000 other connections
 * held. A connection is one that takes every write (no socket: the hub's own work is measured). The
 * broker is the memory bus holding the same 10,000 records plus 10,000 older ones
 * (HISTORY_BROKER_SCAN 20,000), so a page past the buffer reads the broker's whole tail.
 *
 * Rows: each the median (min–max) of `--rounds` samples of `--ops` operations, wall time per
 * operation: plain connect (add + remove), rewind connect (add with rewind=100: the walk back
 * through the ring and the 100 writes, + remove), a history page of 100 from the buffer, a history
 * page of 100 before the buffer's oldest event (broker tail). Run:
 * `node bench/src/history.bench.ts [--rounds 5] [--ops 2000]`.
 */
import './harness/help.ts';
import { MemoryBus } from '@gatehouse/bus';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import { BrokerReadSlots, EventRing, Hub, HubMetrics, readHistory } from '@gatehouse/push-hub';
import { createRegistry } from '@gatehouse/service-kit';
import { boxLine, median } from './harness/index.ts';

const flag = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const rounds = flag('--rounds', 5);
const ops = flag('--ops', 2000);
const ringSize = 10_000;
const topic = 'gw.events';

const extractors = new Map([
  [
    'wanted',
    [
      {
        name: 'room',
        stableFieldIndex: 0,
        eventPointer: '/data/room',
        jwtPointer: undefined,
        readEvent: (e: unknown) => (e as { data?: { room?: unknown } }).data?.room,
      },
    ],
  ],
]);
const subs = [{ eventType: 'wanted', oneOf: [{ room: 1 }] }];

function eventOf(n: number) {
  const type = n % 50 === 0 ? 'wanted' : `other.${n % 49}`;
  return {
    specversion: '1.0',
    id: `e-${n}`,
    source: 'bench',
    type,
    data: { room: 1, n, pad: 'x'.repeat(200) },
  };
}

class SinkConnection {
  readonly transport = 'sse' as const;
  sessionId: string | undefined;
  readonly id = crypto.randomUUID();
  written = 0;
  get eventsWritten(): number {
    return this.written;
  }
  send(): boolean {
    this.written++;
    return true;
  }
  queuedBytes(): number {
    return 0;
  }
  whenDrained(ready: () => void): void {
    setImmediate(ready);
  }
  close(): void {}
}

const bus = new MemoryBus({ retention: 4 * ringSize });
const hub = new Hub({
  extractors,
  ring: new EventRing(ringSize),
  metrics: new HubMetrics(createRegistry()),
  maxRewind: 100,
});
for (let n = 0; n < 2 * ringSize; n++) {
  const e = eventOf(n);
  const position = await bus.publish(topic, { value: JSON.stringify(e), headers: streamEventHeaders(e) });
  if (n >= ringSize) hub.dispatch(position, JSON.stringify(e));
}
for (let i = 0; i < 1000; i++)
  hub.add(new SinkConnection(), [{ eventType: `other.${i % 49}`, oneOf: [] }], { token: 't' });

const matches = hub.index.matcherFor(subs);
const source = {
  ring: hub.ring,
  compare: (a: string, b: string) => bus.comparePositions(a, b),
  covers: () => true,
  wholeStream: () => hub.ringHoldsWholeStream(),
  epochChanged: (position: string) => hub.epochChanged(position),
  tail: { bus, topic, scan: 2 * ringSize, timeoutMs: 30_000, slots: new BrokerReadSlots(1) },
};
const page = (before: string | undefined) =>
  readHistory(source, {
    types: ['wanted'],
    wanted: (e) => e.type === 'wanted' && matches(e.event as { type: string }),
    limit: 100,
    before,
    maxBytes: 1024 * 1024,
  });

async function time(label: string, count: number, op: () => unknown): Promise<void> {
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < count; i++) await op();
    samples.push(Number(process.hrtime.bigint() - start) / 1000 / count);
  }
  const fmt = (us: number) => (us < 100 ? us.toFixed(2) : us.toFixed(0));
  console.log(
    `| ${label} | ${fmt(median(samples))} µs | ${fmt(Math.min(...samples))}–${fmt(Math.max(...samples))} |`,
  );
}

const connect = (rewind: number | undefined) => () => {
  const conn = new SinkConnection();
  hub.add(conn, subs, { token: 't', rewind });
  if (rewind && conn.written < rewind + 2) throw new Error(`rewind wrote ${conn.written}`);
  hub.remove(conn);
};

console.log(boxLine());
console.log(
  `\n${rounds} rounds; buffer ${ringSize} events, 1 in 50 of the subscribed type; 1,000 other connections\n`,
);
console.log('| operation | median per operation | min–max |');
console.log('|---|---|---|');
await time('plain connect (add + remove)', ops, connect(undefined));
await time('connect with rewind=100 from the buffer', ops, connect(100));
const fromRing = await page(undefined);
if (fromRing.events.length !== 100) throw new Error('a page from the buffer holds 100');
await time('history page of 100 from the buffer', ops, () => page(undefined));
const oldest = hub.ring.oldest!;
const pastRing = await page(oldest);
if (pastRing.events.length !== 100)
  throw new Error(`a page past the buffer holds 100, not ${pastRing.events.length}`);
await time(
  'history page of 100 past the buffer (broker tail of 20,000)',
  Math.max(1, Math.floor(ops / 100)),
  () => page(oldest),
);
await bus.close();
