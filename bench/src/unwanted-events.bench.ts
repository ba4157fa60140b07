/**
 * What an event no client of a replica wants costs that replica (issue "A cluster on one box": goal
 * ≤ 1 µs of CPU per such event). Every hub replica reads the whole fan-out stream; most events are
 * for other replicas' clients. The hub's own fan-out consumer (consumeFanout, a real Hub, EventRing
 * and HubMetrics, as push-hub-service.ts wires them) is fed the same records two ways:
 * - before: records as an older publisher wrote them, with only the `gw-published-at` stamp: the
 *   consumer reads every body (Buffer → text, JSON.parse, the namespace check, the ring, the match
 *   against the connections). That is the path every record took before the routing headers: the
 *   code is the same, the only extra work is one header lookup that finds nothing.
 * - after: the same records with the headers the publisher writes now (`ce_type`, `ce_source`,
 *   `ce_id`): the consumer decides from the type that no connection here wants it and keeps it
 *   unread in the ring (fanout-consumer.ts, unread-event.ts).
 * What it does not count: the broker client's decoding of the record (kafkajs, ioredis, NATS), the
 * same on both sides.
 *
 * Set-up: a ring of EVENT_BUFFER_SIZE's default (10,000 events, 64 MiB), 1,000 connections each
 * subscribed to one of 50 other types (with a constraint on an extractor field), no long poll. The
 * records are CloudEvents of ~500 bytes (and a 4 KiB row), each body a view into one large buffer
 * as a Kafka fetch gives them, every id distinct (no duplicates). The records go straight into the
 * consumer's message handler (a bus whose `subscribe` hands it over): no I/O.
 *
 * Method: the process pins itself and all its threads to cpu0 (`taskset -a`, when there) so the
 * garbage collector's helper threads count against the same core; the sides alternate (before,
 * after, before …) for `--rounds` samples of `--events` records each, every sample on a fresh hub
 * and ring; the process CPU time (user + system, all threads: GC included) per record and the wall
 * time per record are reported as medians with min–max, and the ratio of medians; and, as a
 * reference, what the ring alone costs per event (the same events pushed into a fresh ring,
 * made beforehand). The metrics are the service's: "after" counts each event in
 * gw_fanout_events_total and gw_events_forwarded_total but observes no gw_fanout_delivery_seconds
 * (a skipped event is delivered to nobody). Bounded: about a minute. Run: `node bench/src/unwanted-events.bench.ts [--rounds 5] [--events 50000]`.
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import type { Bus, Message, MessageHandler } from '@gatehouse/bus';
import { publishedAtHeaders } from '@gatehouse/bus';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import { consumeFanout, EventRing, Hub, HubMetrics } from '@gatehouse/push-hub';
import { createLogger, createRegistry } from '@gatehouse/service-kit';
import { boxLine, loadAverage, pinProcess } from './harness/index.ts';

const flag = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const rounds = flag('--rounds', 5);
const perSample = flag('--events', 50_000);
const ringSize = 10_000;
const ringBytes = 64 * 1024 * 1024;
const connections = 1_000;
const wantedTypes = 50;

const extractors = new Map(
  Array.from({ length: wantedTypes }, (_, t) => [
    `wanted.${t}`,
    [
      {
        name: 'customer',
        stableFieldIndex: 0,
        eventPointer: '/data/customer',
        jwtPointer: undefined,
        readEvent: (e: unknown) => (e as { data?: { customer?: unknown } }).data?.customer,
      },
    ],
  ]),
);

/** `count` records of events nobody here subscribes to, ~`bytes` each, bodies views into one buffer. */
function records(count: number, bytes: number, withHeaders: boolean): Message[] {
  const stamp = publishedAtHeaders();
  const events = Array.from({ length: count }, (_, i) => {
    const event = {
      specversion: '1.0',
      id: `evt-${i.toString(36).padStart(8, '0')}`,
      source: '/orders/service',
      type: `unwanted.${i % 20}`,
      time: '2026-11-29T13:00:00.000Z',
      datacontenttype: 'application/json',
      data: { order: i, customer: `customer-${i % 997}`, items: [{ sku: 'A-1', qty: 2 }], note: '' },
    };
    event.data.note = 'x'.repeat(Math.max(0, bytes - JSON.stringify(event).length));
    return event;
  });
  const bodies = events.map((e) => Buffer.from(JSON.stringify(e)));
  const fetched = Buffer.concat(bodies);
  let offset = 0;
  return events.map((event, i) => {
    const value = fetched.subarray(offset, offset + bodies[i]!.length);
    offset += bodies[i]!.length;
    return {
      topic: 'gw.events',
      key: undefined,
      value,
      headers: withHeaders ? { ...stamp, ...streamEventHeaders(event) } : { ...stamp },
      position: `0-${i}`,
    };
  });
}

/** A hub as push-hub-service.ts makes it, with `connections` clients of other types; its consumer's handler. */
async function freshConsumer(): Promise<{ handle: MessageHandler; hub: Hub; metrics: HubMetrics }> {
  const metrics = new HubMetrics(createRegistry());
  const hub = new Hub({
    extractors,
    ring: new EventRing(ringSize, ringBytes),
    metrics,
    fanout: { system: 'kafka', topic: 'gw.events' },
  });
  for (let c = 0; c < connections; c++) {
    const conn = {
      id: `c${c}`,
      transport: 'sse' as const,
      sessionId: undefined,
      eventsWritten: 0,
      queuedBytes: () => 0,
      send: () => true,
      whenDrained: (ready: () => void) => setImmediate(ready),
      close: () => {},
    };
    const customer = `customer-${c}`;
    hub.add(conn, [{ eventType: `wanted.${c % wantedTypes}`, oneOf: [{ customer }] }], { token: 't' });
  }
  let handle: MessageHandler | undefined;
  const bus: Bus = {
    kind: 'bench',
    capabilities: { replay: false, tail: false, headers: true },
    publish: () => Promise.reject(new Error('not in this bench')),
    subscribe: async (_topic, handler) => {
      handle = handler;
      return { close: async () => {} };
    },
    comparePositions: (a, b) => Number(a.slice(2)) - Number(b.slice(2)),
    ping: async () => {},
    close: async () => {},
  };
  const noPolls = new Map<string, unknown>();
  await consumeFanout({
    bus,
    topic: 'gw.events',
    hub,
    warmUp: false,
    dispatched: () => {},
    wants: (type) => noPolls.has(type),
    metrics,
    logger: createLogger({ name: 'bench', level: 'silent' }),
  });
  return { handle: handle!, hub, metrics };
}

interface Sample {
  cpuUs: number;
  wallUs: number;
}

async function sample(messages: Message[]): Promise<Sample> {
  const { handle, hub } = await freshConsumer();
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (const m of messages) handle(m);
  const wall = Number(process.hrtime.bigint() - start) / 1000;
  const spent = process.cpuUsage(cpu);
  if (hub.ring.size === 0 || hub.ring.size > ringSize) throw new Error(`ring holds ${hub.ring.size}`);
  return { cpuUs: (spent.user + spent.system) / messages.length, wallUs: wall / messages.length };
}

/**
 * The floor the ring sets: each record's event pushed into a fresh EventRing as the consumer keeps
 * it (pushNew: its duplicate check by source and id, the oldest evicted; positions are indexed only
 * when looked up, which no resume does here), made beforehand: the part of "after" that keeping
 * events for resumes costs, which "before" pays too.
 */
function ringFloor(messages: Message[]): Sample {
  const held = messages.map((m) => ({
    position: m.position,
    type: m.headers['ce_type']!,
    event: {},
    json: '',
    source: m.headers['ce_source']!,
    id: m.headers['ce_id']!,
    textLength: m.value.length,
  }));
  const ring = new EventRing(ringSize, ringBytes);
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (const e of held) ring.pushNew(e);
  const wall = Number(process.hrtime.bigint() - start) / 1000;
  const spent = process.cpuUsage(cpu);
  return { cpuUs: (spent.user + spent.system) / held.length, wallUs: wall / held.length };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const span = (xs: number[]) => `${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)}`;

async function row(label: string, bytes: number): Promise<void> {
  const before = records(perSample, bytes, false);
  const after = records(perSample, bytes, true);
  // Warm-up: both paths compiled before anything is timed.
  await sample(before.slice(0, 20_000));
  await sample(after.slice(0, 20_000));
  ringFloor(after.slice(0, 20_000));
  const b: Sample[] = [];
  const a: Sample[] = [];
  const floor: Sample[] = [];
  for (let r = 0; r < rounds; r++) {
    b.push(await sample(before));
    a.push(await sample(after));
    floor.push(ringFloor(after));
  }
  const cpu = (xs: Sample[]) => xs.map((s) => s.cpuUs);
  const wall = (xs: Sample[]) => xs.map((s) => s.wallUs);
  const goal = median(cpu(a)) <= 1 ? 'met' : 'NOT met';
  console.log(
    `${label.padEnd(22)} CPU µs/event: before ${median(cpu(b)).toFixed(3)} (${span(cpu(b))})  after ${median(cpu(a)).toFixed(3)} (${span(cpu(a))})  after/before ${(median(cpu(a)) / median(cpu(b))).toFixed(3)}  goal ≤ 1 µs ${goal}`,
  );
  console.log(
    `${''.padEnd(22)} of which the ring (push, duplicate check, eviction): CPU ${median(cpu(floor)).toFixed(3)} µs (${span(cpu(floor))})`,
  );
  console.log(
    `${''.padEnd(22)} wall µs/event: before ${median(wall(b)).toFixed(3)} (${span(wall(b))})  after ${median(wall(a)).toFixed(3)} (${span(wall(a))})  after/before ${(median(wall(a)) / median(wall(b))).toFixed(3)}`,
  );
}

function pin(): string {
  try {
    pinProcess(process.pid, 0);
    return 'pinned to cpu0 (taskset -a)';
  } catch {
    return 'not pinned (no taskset)';
  }
}

const pinned = pin();
console.log(`${boxLine()}; ${pinned}; load ${loadAverage().toFixed(2)}`);
console.log(
  `${perSample} unwanted events per sample, ${rounds} samples per side; ring ${ringSize}, ${connections} connections on ${wantedTypes} other types`,
);
await row('~500 B events', 500);
await row('~4 KiB events', 4096);
console.log(`load ${loadAverage().toFixed(2)} at the end`);
