/**
 * What the fan-out consumer's fetch settings cost and save (issue 35: the Kafka term of "an event no
 * client of a replica wants"). kafkajs' cost is per fetch more than per record, and with `minBytes`
 * 1 the broker answers a waiting fetch as soon as one record is there: at a low rate every record
 * is a fetch of its own. FANOUT_FETCH_MIN_BYTES and FANOUT_FETCH_MAX_WAIT (the push hub's settings,
 * Java's `fetch.min.bytes` and `fetch.max.wait.ms`) let the broker gather records first.
 *
 * Set-up: one consumer process per setting, side by side on the same records (one run, the same
 * load on the box for all), each a Kafka bus broadcast subscription as the hub's fan-out consumer
 * makes it (KafkaBus from @gatehouse/bus, its handler doing nothing but note the latency). A
 * publisher (this process) writes CloudEvents of ~500 bytes with the publisher's headers
 * (`ce_type`, `ce_source`, `ce_id`, the publish stamp) to a fresh one-partition topic of the local
 * Kafka, at each rate in turn; above 100 records/s they go every 10 ms, several together (as a
 * busy publisher's batcher sends them).
 *
 * Measured per consumer: CPU time (all threads, /proc schedstat) per second in a window with no
 * records (its idle cost: heartbeats, and an empty fetch per max wait) and in a window at each rate
 * (each after 2 s at the same rate, so it is steady); CPU per record (the window's CPU per second ÷
 * the rate) in all and less the idle rate; publish → handler latency p50/p99 (wall clock, same
 * box). Windows of `--seconds` (twice that below 100 records/s); `--rounds` rounds of all the
 * windows, medians reported. About 4 minutes.
 *
 * Run: `node bench/src/kafka-fetch.bench.ts [--seconds 10] [--rates 3,30,100,1000]
 * [--settings 1/1000,16384/25,65536/50,65536/100] [--rounds 3]` (each setting `minBytes/maxWaitMs`).
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { publishedAtHeaders } from '@gatehouse/bus';
import { KafkaBus } from '@gatehouse/bus/all';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import { dependencyAddress } from '@gatehouse/testkit';
import { boxLine, cpuNanosOf, loadAverage, median, percentile } from './harness/index.ts';

interface Setting {
  minBytes: number;
  maxWaitMs: number;
}

/** What a consumer answers to `mark`: the records and latencies since the last mark. */
interface Window {
  records: number;
  latenciesMs: number[];
}

const sentHeader = 'bench-sent-at';
const now = () => performance.timeOrigin + performance.now();

/** A consumer process: subscribes, then answers every `mark` with what it got since the last. */
async function consume(): Promise<void> {
  const [topic, minBytes, maxWaitMs] = process.argv.slice(process.argv.indexOf('--consumer') + 1);
  const bus = new KafkaBus({
    brokers: dependencyAddress.kafkaBrokers,
    clientId: `kafka-fetch-${process.pid}`,
    fetchMinBytes: Number(minBytes),
    maxWaitTimeMs: Number(maxWaitMs),
  });
  let window: Window = { records: 0, latenciesMs: [] };
  await bus.subscribe(topic!, (m) => {
    window.records++;
    const sent = m.headers[sentHeader];
    if (sent !== undefined) window.latenciesMs.push(now() - Number(sent));
  });
  process.on('message', async (message) => {
    if (message === 'mark') {
      process.send!(window);
      window = { records: 0, latenciesMs: [] };
    } else if (message === 'stop') {
      await bus.close();
      process.exit(0);
    }
  });
  process.send!('ready');
}

interface Consumer {
  setting: Setting;
  child: ChildProcess;
  mark(): Promise<{ cpuNs: number; window: Window }>;
}

async function startConsumer(topic: string, setting: Setting): Promise<Consumer> {
  const self = fileURLToPath(import.meta.url);
  const child = fork(self, ['--consumer', topic, String(setting.minBytes), String(setting.maxWaitMs)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const [ready] = await once(child, 'message');
  if (ready !== 'ready') throw new Error(`consumer ${setting.minBytes}/${setting.maxWaitMs}: ${ready}`);
  let cpuAt = cpuNanosOf(child.pid!);
  return {
    setting,
    child,
    async mark() {
      child.send('mark');
      const [window] = (await once(child, 'message')) as [Window];
      const cpu = cpuNanosOf(child.pid!);
      const cpuNs = cpu - cpuAt;
      cpuAt = cpu;
      return { cpuNs, window };
    },
  };
}

/** ~500 bytes of CloudEvent, as the publisher writes it (body and headers). */
function record(n: number) {
  const event = {
    specversion: '1.0',
    id: `kafka-fetch-${process.pid}-${n}`,
    source: 'bench/kafka-fetch',
    type: 'bench.unwanted',
    time: new Date().toISOString(),
    datacontenttype: 'application/json',
    data: { n, text: 'x'.repeat(300) },
  };
  const headers = { ...publishedAtHeaders(), ...streamEventHeaders(event), [sentHeader]: String(now()) };
  return { value: JSON.stringify(event), headers };
}

/** Publishes at `rate` records/s until `until` (every 10 ms at most, several per tick above 100/s). */
async function publishAt(bus: KafkaBus, topic: string, rate: number, until: number, next: { n: number }) {
  const tickMs = Math.max(10, 1000 / rate);
  const perTick = (rate * tickMs) / 1000;
  let owed = 0;
  for (let due = performance.now(); performance.now() < until; due += tickMs) {
    owed += perTick;
    const batch: Promise<unknown>[] = [];
    for (; owed >= 1; owed--) batch.push(bus.publish(topic, record(next.n++)));
    await Promise.all(batch);
    await sleep(Math.max(0, due + tickMs - performance.now()));
  }
}

const fmtUs = (ns: number) => `${(ns / 1000).toFixed(0)} µs`;
const fmtMs = (ms: number) => `${ms.toFixed(ms < 10 ? 1 : 0)} ms`;
const name = (s: Setting) => `minBytes ${s.minBytes}, max wait ${s.maxWaitMs} ms`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '10' },
      rates: { type: 'string', default: '3,30,100,1000' },
      settings: { type: 'string', default: '1/1000,16384/25,65536/50,65536/100' },
      rounds: { type: 'string', default: '3' },
    },
  });
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const rates = values.rates.split(',').map(Number);
  const settings = values.settings.split(',').map((s) => {
    const [minBytes, maxWaitMs] = s.split('/').map(Number);
    return { minBytes: minBytes!, maxWaitMs: maxWaitMs! };
  });
  console.log(`Kafka fetch settings benchmark — ${boxLine()}; load average ${loadAverage().toFixed(1)}`);
  const topic = `kafka-fetch-${process.pid}-${Date.now().toString(36)}`;
  const bus = new KafkaBus({
    brokers: dependencyAddress.kafkaBrokers,
    clientId: `kafka-fetch-pub-${process.pid}`,
  });
  await bus.ensureTopic(topic, 1);
  const consumers = await Promise.all(settings.map((s) => startConsumer(topic, s)));
  /** CPU ms per second in each round, and every latency, by `<rate>|<setting index>` (rate 0: idle). */
  const cpu = new Map<string, number[]>();
  const latencies = new Map<string, number[]>();
  const note = (key: string, cpuMsPerSecond: number, lat: number[]) => {
    cpu.set(key, [...(cpu.get(key) ?? []), cpuMsPerSecond]);
    latencies.set(key, [...(latencies.get(key) ?? []), ...lat]);
  };
  try {
    await sleep(3000);
    const next = { n: 0 };
    for (let round = 0; round < rounds; round++) {
      for (const rate of [0, ...rates]) {
        const windowMs = (rate > 0 && rate < 100 ? 2 : 1) * seconds * 1000;
        // Warm-up at the same rate (a quiet spell before the idle window), so the window is steady.
        if (rate > 0) await publishAt(bus, topic, rate, performance.now() + 2000, next);
        else await sleep(2000);
        await Promise.all(consumers.map((c) => c.mark()));
        const start = performance.now();
        if (rate > 0) await publishAt(bus, topic, rate, start + windowMs, next);
        else await sleep(windowMs);
        const got = await Promise.all(consumers.map((c) => c.mark()));
        const elapsed = (performance.now() - start) / 1000;
        for (const [i, { cpuNs, window }] of got.entries())
          note(`${rate}|${i}`, cpuNs / 1e6 / elapsed, window.latenciesMs);
      }
      console.log(`  round ${round + 1} of ${rounds} done; load average ${loadAverage().toFixed(1)}`);
    }
    console.log(
      `\nMedians of ${rounds} rounds (CPU of each consumer process, all threads; "less idle": less its own idle rate):`,
    );
    console.log('| rate | setting | CPU/s | CPU per record | less idle | latency p50 / p99 |');
    console.log('| --- | --- | --- | --- | --- | --- |');
    for (const rate of [0, ...rates]) {
      for (const [i, c] of consumers.entries()) {
        const perSecond = median(cpu.get(`${rate}|${i}`)!);
        const idle = median(cpu.get(`0|${i}`)!);
        const lat = latencies.get(`${rate}|${i}`)!;
        const perRecord = rate === 0 ? '—' : fmtUs((perSecond * 1e6) / rate);
        const lessIdle = rate === 0 ? '—' : fmtUs(((perSecond - idle) * 1e6) / rate);
        const latency = rate === 0 ? '—' : `${fmtMs(percentile(lat, 50))} / ${fmtMs(percentile(lat, 99))}`;
        console.log(
          `| ${rate === 0 ? 'idle' : `${rate}/s`} | ${name(c.setting)} | ${fmtMs(perSecond)} | ${perRecord} | ${lessIdle} | ${latency} |`,
        );
      }
    }
  } finally {
    await Promise.allSettled(
      consumers.map(async (c) => {
        c.child.send('stop');
        if (c.child.exitCode === null) await once(c.child, 'exit');
      }),
    );
    await bus.close();
  }
}

if (process.argv.includes('--consumer')) await consume();
else await main();
