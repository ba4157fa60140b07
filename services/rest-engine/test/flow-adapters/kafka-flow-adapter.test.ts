/**
 * The Kafka flow adapter against the project's Kafka: one engine reads six bindings at once (each
 * on topics of its own), records go in through a plain producer the way any upstream writes them,
 * and what the flows' functions received, what the group committed and what reached the dead-letter
 * topic are read back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dependencyAddress, waitFor } from '@gatehouse/testkit';
import { type RunningEngine, startEngine } from '../engine-fixture.ts';
import { adapterFile, fixtureApp, KafkaTestKit, seen } from './kafka-fixture.ts';

const kit = new KafkaTestKit();
const t = {
  direct: kit.name('direct'),
  routed: kit.name('routed'),
  failing: kit.name('failing'),
  dlq: kit.name('failing-dlq'),
  prefix: kit.name('pattern').replaceAll('-', '_'),
  pinned: kit.name('pinned'),
  auto: kit.name('auto'),
  big: kit.name('big'),
  custom: kit.name('custom'),
  bigDlq: kit.name('big-dlq'),
};
const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
let engine: RunningEngine;

const seenOn = (topic: string) =>
  seen().filter((s) => (s['metadata'] as { topic?: string })?.topic === topic);

before(async () => {
  await kit.open();
  await Promise.all([
    kit.createTopic(t.direct),
    kit.createTopic(t.routed),
    kit.createTopic(t.failing),
    kit.createTopic(t.dlq),
    kit.createTopic(t.pinned, 2),
    kit.createTopic(t.auto),
    kit.createTopic(t.big),
    kit.createTopic(t.bigDlq),
    kit.createTopic(t.custom),
  ]);
  const file = adapterFile(
    'kafka-flow-adapter.yaml',
    `consumer:
  - topic: '${t.direct}'
    flow: 'adapter-record-a'
    serializer: 'json'
  - topic: '${t.routed}'
    serializer: 'json'
    flows:
      - 'input.header.type(order-*) -> flow://adapter-record-b'
      - 'input.body.event.kind(regex: refund-(eu|us)) -> flow://adapter-record-b'
      - 'default -> flow://adapter-record-a'
  - topic: '${t.failing}'
    flow: 'adapter-fail'
    dlq-topic: '${t.dlq}'
  - topic-pattern: '${t.prefix}\\.[a-z]+'
    group: '${t.prefix}-group'
    flow: 'adapter-record-a'
  - topic: '${t.pinned}'
    partition: 1
    flow: 'adapter-record-a'
  - topic: '${t.auto}'
    auto-commit: true
    flow: 'adapter-record-a'
  - topic: '${t.custom}'
    flow: 'adapter-record-b'
    group: '${t.custom}-own-group'
    correlation.id.header: 'X-Correlation-ID'
    traceparent.header: 'X-Trace-Context'
  - topic: '${t.big}'
    flow: 'adapter-record-a'
    dlq-topic: '${t.bigDlq}'
`,
  );
  engine = await startEngine({
    REST_CONFIG_FOLDER: fixtureApp,
    YAML_KAFKA_FLOW_ADAPTER: file,
    KAFKA_BROKERS: dependencyAddress.kafkaBrokers.join(','),
    KAFKA_FLOW_MAX_RETRIES: '2',
    KAFKA_FLOW_RETRY_BACKOFF_MS: '20',
    KAFKA_FLOW_METADATA_REFRESH_MS: '300',
    FLOW_ADAPTER_MAX_RECORD_BYTES: '4096',
  });
});

after(async () => {
  await engine?.stop();
  await kit.close();
});

describe('Kafka flow adapter', () => {
  it('hands a record to its flow as input.body, input.header and input.metadata, then commits it', async () => {
    await kit.producer.send({
      topic: t.direct,
      messages: [
        {
          key: 'k-1',
          value: JSON.stringify({ n: 1 }),
          headers: { 'X-Tag': 'tagged', cid: 'cid-1', traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
        },
      ],
    });
    const [got] = await waitFor(() => (seenOn(t.direct).length > 0 ? seenOn(t.direct) : undefined), {
      timeoutMs: 20_000,
      what: 'the direct record',
    });
    assert.equal(got!['flow'], 'a');
    assert.deepEqual(got!['body'], { n: 1 });
    assert.equal((got!['record_header'] as Record<string, string>)['x-tag'], 'tagged');
    const metadata = got!['metadata'] as Record<string, unknown>;
    assert.deepEqual(
      { ...metadata, timestamp: typeof metadata['timestamp'] },
      { topic: t.direct, partition: 0, offset: 0, key: 'k-1', timestamp: 'number' },
    );
    const events = got!['event_headers'] as Record<string, string>;
    assert.equal(events['my_correlation_id'], 'cid-1');
    assert.equal(events['my_trace_id'], traceId, 'the producer trace goes on in the flow');
    const spans = engine.spans.getFinishedSpans().filter((x) => x.spanContext().traceId === traceId);
    const parents = spans.map((x) => x.parentSpanContext?.spanId);
    assert.ok(
      parents.includes('00f067aa0ba902b7'),
      `a span of the flow is a child of the producer's span: ${parents}`,
    );
    await kit.waitCommitted(`kafka-flow-adapter.${t.direct}`, t.direct, 0, 1);
  });

  it('reads the correlation id and the trace context from the headers a binding names, in its own group', async () => {
    const otherTrace = '0af7651916cd43dd8448eb211c80319c';
    await kit.producer.send({
      topic: t.custom,
      messages: [
        {
          value: 'x',
          headers: { 'X-Correlation-ID': 'mine', 'X-Trace-Context': `00-${otherTrace}-b7ad6b7169203331-01` },
        },
      ],
    });
    const [got] = await waitFor(() => (seenOn(t.custom).length > 0 ? seenOn(t.custom) : undefined), {
      timeoutMs: 20_000,
      what: 'the record with custom headers',
    });
    const events = got!['event_headers'] as Record<string, string>;
    assert.equal(events['my_correlation_id'], 'mine');
    assert.equal(events['my_trace_id'], otherTrace);
    await kit.waitCommitted(`${t.custom}-own-group`, t.custom, 0, 1);
  });

  it('routes each record by a header or a body field, the first match winning, else the default', async () => {
    await kit.producer.send({
      topic: t.routed,
      messages: [
        { value: JSON.stringify({ id: 'by-header' }), headers: { Type: 'order-7' } },
        { value: JSON.stringify({ id: 'by-body', event: { kind: 'refund-eu' } }) },
        {
          value: JSON.stringify({ id: 'no-match', event: { kind: 'refund-xx' } }),
          headers: { type: 'order' },
        },
        { value: 'not json' },
      ],
    });
    const got = await waitFor(() => (seenOn(t.routed).length >= 4 ? seenOn(t.routed) : undefined), {
      timeoutMs: 20_000,
      what: 'four routed records',
    });
    const flowOf = (id: string) => got.find((s) => (s['body'] as { id?: string })?.id === id)?.['flow'];
    assert.equal(flowOf('by-header'), 'b');
    assert.equal(flowOf('by-body'), 'b');
    assert.equal(flowOf('no-match'), 'a');
    const raw = got.find((s) => Buffer.isBuffer(s['body']) || s['body'] instanceof Uint8Array);
    assert.equal(
      Buffer.from(raw!['body'] as Uint8Array).toString(),
      'not json',
      'a body that is no JSON object stays bytes',
    );
    assert.equal(raw!['flow'], 'a');
  });

  it('retries a failing flow the set number of times, then writes the record to the dead-letter topic with the failure', async () => {
    const dead = await kit.reader(t.dlq);
    await kit.producer.send({
      topic: t.failing,
      messages: [{ key: 'bad', value: 'payload', headers: { 'x-origin': 'test' } }],
    });
    const [letter] = await waitFor(() => (dead.length > 0 ? dead : undefined), {
      timeoutMs: 20_000,
      what: 'the dead letter',
    });
    assert.equal(letter!.value?.toString(), 'payload');
    assert.equal(letter!.key?.toString(), 'bad');
    assert.equal(letter!.headers?.['dlq.origin.topic']?.toString(), t.failing);
    assert.match(String(letter!.headers?.['dlq.error']), /adapter\.fail always fails/);
    assert.equal(letter!.headers?.['x-origin']?.toString(), 'test');
    assert.equal(
      seen().filter((s) => s['failed'] && (s['metadata'] as { topic: string }).topic === t.failing).length,
      3,
    );
    await kit.waitCommitted(`kafka-flow-adapter.${t.failing}`, t.failing, 0, 1);
    const metrics = await engine.registry.metrics();
    assert.match(
      metrics,
      new RegExp(`gw_flow_adapter_records_total\\{binding="kafka:${t.failing}",outcome="dead_lettered"\\} 1`),
    );
    assert.match(metrics, new RegExp(`gw_flow_adapter_retries_total\\{binding="kafka:${t.failing}"\\} 2`));
    assert.match(metrics, new RegExp(`gw_flow_adapter_failures_total\\{binding="kafka:${t.failing}"\\} 3`));
  });

  it('picks up a topic that matches its pattern when it is created after the start', async () => {
    const later = `${t.prefix}.late`;
    await kit.createTopic(later);
    await kit.producer.send({ topic: later, messages: [{ value: JSON.stringify({ late: true }) }] });
    const [got] = await waitFor(() => (seenOn(later).length > 0 ? seenOn(later) : undefined), {
      timeoutMs: 20_000,
      what: 'the record of the topic created later',
    });
    assert.equal(Buffer.from(got!['body'] as Uint8Array).toString(), '{"late":true}');
    await kit.waitCommitted(`${t.prefix}-group`, later, 0, 1);
  });

  it('reads only the pinned partition', async () => {
    await kit.producer.send({
      topic: t.pinned,
      messages: [
        { partition: 0, value: 'zero' },
        { partition: 1, value: 'one' },
      ],
    });
    await kit.waitCommitted(`kafka-flow-adapter.${t.pinned}`, t.pinned, 1, 1);
    const partitions = seenOn(t.pinned).map((s) => (s['metadata'] as { partition: number }).partition);
    assert.deepEqual(partitions, [1]);
    assert.equal(
      (await kit.committed(`kafka-flow-adapter.${t.pinned}`, t.pinned)).get(0),
      -1,
      'partition 0 is nobody’s',
    );
  });

  it('lets Kafka commit on its own with auto-commit', async () => {
    await kit.producer.send({ topic: t.auto, messages: [{ value: 'a' }, { value: 'b' }] });
    await kit.waitCommitted(`kafka-flow-adapter.${t.auto}`, t.auto, 0, 2);
    await waitFor(() => seenOn(t.auto).length === 2, { timeoutMs: 10_000, what: 'both auto-commit records' });
  });

  it('sends a record larger than flow.adapter.max-record-bytes to the dead-letter topic without a flow run', async () => {
    const dead = await kit.reader(t.bigDlq);
    await kit.producer.send({
      topic: t.big,
      messages: [
        { value: 'x'.repeat(5000) },
        // 1,400 characters, 4,200 bytes: the bound counts what the broker carried, in bytes.
        { value: '{}', headers: { note: 'あ'.repeat(1400) } },
        // A repeated header: every value was carried, not only the last one the flow sees.
        { value: '{}', headers: { note: ['y'.repeat(2500), 'z'.repeat(2500)] } },
        { value: JSON.stringify({ small: true }) },
      ],
    });
    const letters = await waitFor(() => (dead.length >= 3 ? dead : undefined), {
      timeoutMs: 20_000,
      what: 'the three dead letters',
    });
    assert.deepEqual(
      letters.map(
        (l) =>
          String(l.headers?.['dlq.error']).match(
            /record of (\d+) bytes is larger than flow\.adapter\.max-record-bytes \(4096\)/,
          )?.[1],
      ),
      ['5000', '4206', '5010'],
    );
    await kit.waitCommitted(`kafka-flow-adapter.${t.big}`, t.big, 0, 4);
    assert.deepEqual(
      seenOn(t.big).map((x) => (x['metadata'] as { offset: number }).offset),
      [3],
      'only the small record ran its flow',
    );
  });

  it('keeps hostile records as data: a header named __proto__, a JSON body nested 2,000 levels', async () => {
    const deep = `${'['.repeat(2000)}${']'.repeat(2000)}`;
    await kit.producer.send({
      topic: t.direct,
      messages: [
        {
          value: deep,
          headers: Object.fromEntries([
            ['__proto__', 'polluted'],
            ['id', 'hostile'],
          ]),
        },
        { value: JSON.stringify({ after: true }), headers: { id: 'after' } },
      ],
    });
    const got = await waitFor(
      () => {
        const both = seenOn(t.direct).filter((x) => (x['record_header'] as Record<string, string>)['id']);
        return both.length >= 2 ? both : undefined;
      },
      { timeoutMs: 20_000, what: 'the hostile record and the one after it' },
    );
    const hostile = got.find((x) => (x['record_header'] as Record<string, string>)['id'] === 'hostile')!;
    assert.ok(Object.hasOwn(hostile['record_header'] as object, '__proto__'), 'the header is an own key');
    assert.equal(Object.getPrototypeOf(hostile['record_header']), Object.prototype);
    assert.ok(hostile['body'] instanceof Uint8Array, 'too deep for MAX_JSON_DEPTH: the bytes go on');
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });

  it('shows consumer lag per binding and partition on /metrics', async () => {
    const metrics = await waitFor(
      async () => {
        const text = await engine.registry.metrics();
        return text.includes(
          `gw_flow_adapter_consumer_lag{binding="kafka:${t.direct}",topic="${t.direct}",partition="0"} 0`,
        )
          ? text
          : undefined;
      },
      { timeoutMs: 10_000, what: 'the lag gauge' },
    );
    assert.match(metrics, /gw_flow_adapter_in_flight/);
  });
});
