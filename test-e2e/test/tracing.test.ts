/**
 * One request, one trace, across real processes, read back from the real trace backend (Jaeger,
 * started by tools/deps.sh):
 * - HTTP into the proxy → the request event on Kafka → the publisher consuming it as a source → the
 *   fan-out stream → a delivery span on each push-hub replica, the event reaching an SSE client;
 * - HTTP into the publisher's /_gw/v1/events → fan-out → the hubs;
 * - HTTP into the proxy → the REST engine → its functions;
 * and the proxy's Google Cloud Logging lines written inside a traced request carry that trace.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  describeTrace,
  type ExportedSpan,
  openSse,
  type SseConnection,
  waitFor,
  waitForTrace,
} from '@gatehouse/testkit';
import { gcpProject, startTracedTopology, type TracedTopology } from '../src/traced-topology.ts';

const subs = (list: unknown) => encodeURIComponent(JSON.stringify(list));
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** A made-up caller: its own span id as the parent of everything the gateway does. */
function caller() {
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

function only(spans: ExportedSpan[], where: Partial<Pick<ExportedSpan, 'service' | 'kind' | 'name'>>) {
  const found = spans.filter(
    (s) =>
      (where.service === undefined || s.service === where.service) &&
      (where.kind === undefined || s.kind === where.kind) &&
      (where.name === undefined || s.name === where.name),
  );
  assert.equal(found.length, 1, `one ${JSON.stringify(where)} span expected in\n${describeTrace(spans)}`);
  return found[0]!;
}

/**
 * Every span's parent is in the trace, or is the caller's span: each process exports on its own
 * schedule, so the delivery spans of the hubs can be in the backend before the publisher's span
 * they are children of.
 */
function connected(spans: ExportedSpan[], callerSpanId: string): boolean {
  const ids = new Set(spans.map((s) => s.spanId));
  return spans.every(
    (s) => s.parentSpanId === callerSpanId || (s.parentSpanId !== undefined && ids.has(s.parentSpanId)),
  );
}

function assertChild(child: ExportedSpan, parent: ExportedSpan | string, spans: ExportedSpan[]) {
  const parentId = typeof parent === 'string' ? parent : parent.spanId;
  assert.equal(
    child.parentSpanId,
    parentId,
    `${child.service} ${child.name} should be a child of ${parentId}:\n${describeTrace(spans)}`,
  );
}

describe('distributed tracing across processes', () => {
  let t: TracedTopology;
  let sse: SseConnection[] = [];
  before(async () => {
    t = await startTracedTopology();
    const wanted = subs([{ eventType: 'traced.order' }]);
    // Two connections on hub A, one on hub B: still one delivery span per event and replica.
    sse = await Promise.all(
      [t.hubs[0], t.hubs[0], t.hubs[1]].map((hub) =>
        openSse(`${hub.publicUrl}/_gw/v1/connection/sse?subscriptions=${wanted}`),
      ),
    );
    await waitFor(() => sse.every((c) => c.frames.length >= 2));
  });
  after(async () => {
    for (const c of sse) c.close();
    await t?.stop();
  });

  /** Waits until every SSE connection got the event with this id; returns what hub A's first got. */
  async function delivered(id: string): Promise<Record<string, unknown>> {
    const got = () => sse.map((c) => c.events('traced.order').find((e) => e['id'] === id));
    await waitFor(() => got().every(Boolean), { timeoutMs: 30_000, what: `event ${id} on every connection` });
    return got()[0]!;
  }

  function deliverySpans(spans: ExportedSpan[]) {
    return spans.filter((s) => s.service === 'push-hub' && s.kind === 'consumer');
  }

  it('HTTP into the proxy → Kafka → publisher → fan-out → hubs → SSE is one trace', async (test) => {
    const client = caller();
    const id = `order-${hex(4)}`;
    const res = await fetch(`${t.proxy.publicUrl}/traced/events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/cloudevents+json',
        traceparent: client.traceparent,
        tracestate: 'e2e=client',
      },
      body: JSON.stringify({ specversion: '1.0', id, source: 'e2e', type: 'traced.order', data: { n: 1 } }),
    });
    assert.equal(res.status, 202, await res.text());
    const event = await delivered(id);
    const spans = await waitForTrace(
      client.traceId,
      (s) => deliverySpans(s).length === 2 && connected(s, client.spanId),
    );
    test.diagnostic(`trace ${client.traceId}:\n${describeTrace(spans)}`);

    const server = only(spans, { service: 'proxy', kind: 'server' });
    assert.equal(server.name, 'POST /traced/events');
    assertChild(server, client.spanId, spans);
    assert.equal(server.attributes['http.request.method'], 'POST');
    assert.equal(server.attributes['url.path'], '/traced/events');
    assert.equal(server.attributes['http.route'], '/traced/events');
    assert.equal(server.attributes['http.response.status_code'], 202);
    assert.equal(server.resource['service.instance.id'], t.replicas['proxy']);
    assert.equal(server.resource['service.version'], '0.1.0');

    const toKafka = only(spans, { service: 'proxy', kind: 'producer' });
    assert.equal(toKafka.name, `send ${t.requestTopic}`);
    assertChild(toKafka, server, spans);
    assert.equal(toKafka.attributes['messaging.system'], 'kafka');
    assert.equal(toKafka.attributes['messaging.destination.name'], t.requestTopic);
    assert.equal(toKafka.attributes['messaging.operation.type'], 'send');
    assert.equal(toKafka.attributes['cloudevents.event_id'], id);

    // The publisher's consumer span is a child of the proxy's producer span: the Kafka message
    // carried that span's context as the CloudEvent's traceparent.
    const fromKafka = only(spans, { service: 'publisher', kind: 'consumer' });
    assert.equal(fromKafka.name, `process ${t.requestTopic}`);
    assertChild(fromKafka, toKafka, spans);
    assert.equal(fromKafka.attributes['messaging.operation.type'], 'process');
    assert.equal(fromKafka.resource['service.instance.id'], t.replicas['publisher']);

    const toFanout = only(spans, { service: 'publisher', kind: 'producer' });
    assert.equal(toFanout.name, `send ${t.fanoutTopic}`);
    assertChild(toFanout, fromKafka, spans);

    const deliveries = deliverySpans(spans);
    for (const d of deliveries) {
      assert.equal(d.name, `deliver ${t.fanoutTopic}`);
      assertChild(d, toFanout, spans);
      assert.equal(d.attributes['messaging.operation.name'], 'deliver');
    }
    const recipients = Object.fromEntries(
      deliveries.map((d) => [d.resource['service.instance.id'], d.attributes['gw.delivery.recipients']]),
    );
    assert.deepEqual(recipients, { [t.replicas['hub-a']!]: 2, [t.replicas['hub-b']!]: 1 });

    // What the SSE client got carries the trace on, the caller's tracestate included.
    assert.equal(event['traceparent'], `00-${client.traceId}-${toFanout.spanId}-01`);
    assert.equal(event['tracestate'], 'e2e=client');
  });

  it("HTTP into the publisher's /_gw/v1/events → fan-out → hubs is one trace", async (test) => {
    const client = caller();
    const id = `order-${hex(4)}`;
    const res = await fetch(`${t.publisher.publicUrl}/_gw/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/cloudevents+json', traceparent: client.traceparent },
      body: JSON.stringify({ specversion: '1.0', id, source: 'e2e', type: 'traced.order' }),
    });
    assert.equal(res.status, 202, await res.text());
    const event = await delivered(id);
    const spans = await waitForTrace(
      client.traceId,
      (s) => deliverySpans(s).length === 2 && connected(s, client.spanId),
    );
    test.diagnostic(`trace ${client.traceId}:\n${describeTrace(spans)}`);

    const server = only(spans, { service: 'publisher', kind: 'server' });
    assert.equal(server.name, 'POST /_gw/v1/events');
    assertChild(server, client.spanId, spans);
    assert.equal(server.attributes['http.response.status_code'], 202);
    const toFanout = only(spans, { service: 'publisher', kind: 'producer' });
    assertChild(toFanout, server, spans);
    for (const d of deliverySpans(spans)) assertChild(d, toFanout, spans);
    assert.equal(event['traceparent'], `00-${client.traceId}-${toFanout.spanId}-01`);
  });

  it('an event that carries its own traceparent (no header) is traced under it', async () => {
    const producer = caller();
    const id = `order-${hex(4)}`;
    const res = await fetch(`${t.publisher.publicUrl}/_gw/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/cloudevents+json' },
      body: JSON.stringify({
        specversion: '1.0',
        id,
        source: 'e2e',
        type: 'traced.order',
        traceparent: producer.traceparent,
      }),
    });
    assert.equal(res.status, 202, await res.text());
    await delivered(id);
    const spans = await waitForTrace(
      producer.traceId,
      (s) => deliverySpans(s).length === 2 && connected(s, producer.spanId),
    );
    assertChild(only(spans, { service: 'publisher', kind: 'server' }), producer.spanId, spans);
  });

  it('HTTP into the proxy → REST engine → functions is one trace', async (test) => {
    const client = caller();
    const res = await fetch(`${t.proxy.publicUrl}/api/audit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: client.traceparent },
      body: JSON.stringify({ audit: 'traced' }),
    });
    assert.equal(res.status, 200, await res.text());
    const engineSpans = (s: ExportedSpan[]) => s.filter((x) => x.service === 'rest-engine').length;
    const spans = await waitForTrace(client.traceId, (s) => engineSpans(s) === 3);
    test.diagnostic(`trace ${client.traceId}:\n${describeTrace(spans)}`);

    const server = only(spans, { service: 'proxy', kind: 'server' });
    assert.equal(server.name, 'POST /api/(.*)');
    assertChild(server, client.spanId, spans);
    const forward = only(spans, { service: 'proxy', kind: 'client' });
    assertChild(forward, server, spans);
    assert.equal(forward.attributes['http.response.status_code'], 200);
    assert.equal(forward.attributes['server.address'], '127.0.0.1');

    // The primary function is the engine's SERVER span; the secondary runs beside it, under the
    // same caller; the response writer follows the primary.
    const engine = only(spans, { service: 'rest-engine', kind: 'server' });
    assertChild(engine, forward, spans);
    assert.equal(engine.name, 'hello.echo');
    assert.equal(engine.attributes['http.response.status_code'], 200);
    assertChild(
      only(spans, { service: 'rest-engine', name: 'hello.audit', kind: 'internal' }),
      forward,
      spans,
    );
    const writer = only(spans, { service: 'rest-engine', name: 'async.http.response', kind: 'internal' });
    assertChild(writer, engine, spans);
    assert.equal(engine.resource['service.version'], '0.1.0');
  });

  it('LOG_FMT=GCL lines written inside a traced request carry its trace and span', async () => {
    const client = caller();
    const res = await fetch(`${t.proxy.publicUrl}/traced/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: client.traceparent },
      body: JSON.stringify({ plain: 'body' }),
    });
    assert.equal(res.status, 202, await res.text());
    const spans = await waitForTrace(client.traceId, (s) => s.some((x) => x.service === 'proxy'));
    const server = only(spans, { service: 'proxy', kind: 'server' });

    const lines = t.proxy
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const logged = lines.find(
      (l) =>
        l['message'] === 'proxy request' &&
        l['logging.googleapis.com/trace'] !== undefined &&
        String(l['logging.googleapis.com/trace']).endsWith(client.traceId),
    );
    assert.ok(logged, `a request log line of trace ${client.traceId} in:\n${t.proxy.output()}`);
    assert.equal(logged['severity'], 'INFO');
    assert.equal(logged['logging.googleapis.com/trace'], `projects/${gcpProject}/traces/${client.traceId}`);
    assert.equal(logged['logging.googleapis.com/spanId'], server.spanId);
    assert.equal(logged['logging.googleapis.com/trace_sampled'], true);
    const outside = lines.find((l) => l['message'] === 'listening');
    assert.ok(outside, 'the start-up line is kept');
    assert.equal(outside['logging.googleapis.com/trace'], undefined, 'no trace outside a request');
  });
});
