/**
 * At-least-once across a crash: the REST engine runs as its own process (src/main.ts, as deployed),
 * a three-task flow reports every record it finished to an HTTP sink, and the process is killed
 * with SIGKILL while records are in flows. A second engine in the same group takes over: every
 * record reaches the sink (0 lost), and only records whose flow had finished but whose offset was
 * not yet committed come twice — at most one per partition, as docs/flow-adapters.md says. Then
 * SIGTERM stops the second one cleanly: in-flight flows finish, and every record that reached the
 * sink is committed before the process exits (nothing would come twice).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dependencyAddress, type ServiceProcess, waitFor } from '@gatehouse/testkit';
import { type CountingSink, startCountingSink, startEngineProcess } from './engine-process.ts';
import { adapterFile, KafkaTestKit } from './kafka-fixture.ts';

const kit = new KafkaTestKit();
const topic = kit.name('crash');
const partitions = 3;
const total = 200;
const engines: ServiceProcess[] = [];
let sink: CountingSink;

async function startEngine(file: string): Promise<ServiceProcess> {
  const engine = await startEngineProcess(sink.url, {
    YAML_KAFKA_FLOW_ADAPTER: file,
    KAFKA_BROKERS: dependencyAddress.kafkaBrokers.join(','),
    KAFKA_FLOW_SESSION_TIMEOUT_MS: '6000',
    PAUSE_MS: '10',
  });
  engines.push(engine);
  return engine;
}

const distinct = () => sink.distinct();
const duplicates = () => sink.duplicates();

before(async () => {
  await kit.open();
  await kit.createTopic(topic, partitions);
  sink = await startCountingSink();
});

after(async () => {
  for (const e of engines) await e.stop(5000).catch(() => undefined);
  await sink?.close();
  await kit.close();
});

describe('Kafka flow adapter across a crash', () => {
  it('loses no record when the engine is killed mid-flow, and repeats only the finished but uncommitted ones', async (t) => {
    const file = adapterFile(
      'kafka-flow-adapter.yaml',
      `consumer:\n  - topic: '${topic}'\n    flow: 'adapter-sink'\n    serializer: 'json'\n`,
    );
    const messages = Array.from({ length: total }, (_, i) => ({
      key: String(i),
      value: JSON.stringify({ id: String(i) }),
    }));
    await kit.producer.send({ topic, messages });

    const first = await startEngine(file);
    const ready = (await (await fetch(`${first.apiUrl}/ready`)).json()) as { checks: Record<string, string> };
    assert.equal(ready.checks['flow-adapters'], 'ok', 'readiness waits for the consumers');
    await waitFor(() => distinct() >= 60, { timeoutMs: 30_000, what: '60 records through the first engine' });
    process.kill(first.pid, 'SIGKILL');
    const killed = await first.exited;
    assert.equal(killed.signal, 'SIGKILL');
    const beforeTakeOver = distinct();
    assert.ok(beforeTakeOver < total, 'the kill came while records were left');

    const second = await startEngine(file);
    await waitFor(() => distinct() === total, {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: 'every record at the sink',
    });
    t.diagnostic(`killed after ${beforeTakeOver} records; ${duplicates()} came twice`);
    assert.ok(
      duplicates() <= partitions,
      `${duplicates()} records came twice; at most one per partition may`,
    );
    const ends = await kit.admin.fetchTopicOffsets(topic);
    for (const end of ends)
      await kit.waitCommitted(`kafka-flow-adapter.${topic}`, topic, end.partition, Number(end.high));

    // A clean stop in the middle of a second batch: flows finish and commit before the process exits.
    const more = Array.from({ length: 100 }, (_, i) => ({
      key: String(i),
      value: JSON.stringify({ id: `m${i}` }),
    }));
    await kit.producer.send({ topic, messages: more });
    await waitFor(() => distinct() >= total + 20, { timeoutMs: 30_000, what: 'part of the second batch' });
    const stopped = await second.stop(15_000);
    assert.equal(stopped.code, 0, second.output());
    const done = [...(await kit.committed(`kafka-flow-adapter.${topic}`, topic)).values()].reduce(
      (a, b) => a + b,
      0,
    );
    assert.ok(distinct() < total + 100, 'the stop came while records were left');
    t.diagnostic(`SIGTERM after ${distinct() - total} of 100 records; ${done - total} committed`);
    assert.equal(
      done,
      distinct(),
      `every record that reached the sink is committed, and only those ${second.output()}`,
    );
  });
});
