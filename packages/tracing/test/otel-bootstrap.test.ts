import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import {
  contextWithRemoteParent,
  hopTraceContext,
  isTracingActive,
  startTracing,
  type TraceContext,
  tracesUrl,
} from '../src/index.ts';

interface Received {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A local OTLP/HTTP receiver that records every request. */
async function startReceiver(): Promise<{ server: Server; url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: { key: string; value: { stringValue?: string } }[];
}

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string };
}

function spansOf(body: Buffer): { spans: OtlpSpan[]; resource: OtlpAttribute[] } {
  const json = JSON.parse(body.toString()) as {
    resourceSpans: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
  };
  const first = json.resourceSpans[0]!;
  return { spans: first.scopeSpans.flatMap((s) => s.spans), resource: first.resource.attributes };
}

describe('tracesUrl', () => {
  it('is off without configuration', () => {
    assert.equal(tracesUrl({}, {}), undefined);
    assert.equal(tracesUrl({}, { OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }), undefined);
  });

  it('appends /v1/traces to a base endpoint, from the option or OTEL_EXPORTER_OTLP_ENDPOINT', () => {
    assert.equal(tracesUrl({ endpoint: 'http://collector:4318/' }, {}), 'http://collector:4318/v1/traces');
    assert.equal(tracesUrl({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }), 'http://c:4318/v1/traces');
  });

  it('uses OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is', () => {
    const env = {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://c/custom',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base',
    };
    assert.equal(tracesUrl({}, env), 'https://c/custom');
  });

  it('prefers the explicit option to the environment', () => {
    const env = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://env/v1/traces' };
    assert.equal(tracesUrl({ endpoint: 'http://option' }, env), 'http://option/v1/traces');
  });

  it('stays off when the SDK or the traces exporter is switched off', () => {
    assert.equal(tracesUrl({ endpoint: 'http://c' }, { OTEL_SDK_DISABLED: 'true' }), undefined);
    assert.equal(tracesUrl({ endpoint: 'http://c' }, { OTEL_TRACES_EXPORTER: 'none' }), undefined);
    assert.equal(tracesUrl({ endpoint: 'http://c' }, { OTEL_SDK_DISABLED: 'false' }), 'http://c/v1/traces');
  });

  it('refuses an endpoint that is not an http(s) URL', () => {
    assert.throws(() => tracesUrl({ endpoint: 'collector:4318' }, {}), /must be an http\(s\) URL/);
    assert.throws(
      () => tracesUrl({}, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://[bad' }),
      /not a valid URL/,
    );
  });
});

describe('startTracing', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    receiver = await startReceiver();
  });
  after(() => {
    receiver.server.close();
  });

  it('stays off without configuration: no-op API, nothing sent', async () => {
    const handle = await startTracing({ serviceName: 'off', env: {} });
    assert.equal(handle.enabled, false);
    assert.equal(isTracingActive(), false);
    assert.equal(handle.tracesUrl, undefined);
    const span = trace.getTracer('test').startSpan('nothing');
    assert.equal(span.isRecording(), false);
    span.end();
    await handle.shutdown();
    assert.equal(receiver.received.length, 0);
  });

  it('loads the SDK only when tracing is on', () => {
    const seen = (env: string) => {
      // A child process records every module it loads; the SDK is @opentelemetry/sdk-node.
      const script = `
        import { registerHooks } from 'node:module';
        const loaded = [];
        registerHooks({ resolve: (s, c, next) => { loaded.push(s); return next(s, c); } });
        const { startTracing } = await import(${JSON.stringify(new URL('../src/index.ts', import.meta.url).href)});
        const handle = await startTracing({ serviceName: 'probe', env: ${env} });
        await handle.shutdown();
        console.log(JSON.stringify(loaded.filter((s) => s.startsWith('@opentelemetry/'))));`;
      const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
      return JSON.parse(out) as string[];
    };
    assert.ok(!seen('{}').includes('@opentelemetry/sdk-node'), 'not loaded when off');
    const on = seen(`{ OTEL_EXPORTER_OTLP_ENDPOINT: ${JSON.stringify(receiver.url)} }`);
    assert.ok(on.includes('@opentelemetry/sdk-node'), `loaded when on: ${on.join(', ')}`);
  });

  it('exports spans over OTLP/HTTP to the configured endpoint, under the incoming trace', async () => {
    const handle = await startTracing({
      serviceName: 'code-name',
      serviceInstanceId: 'hub-7f3a',
      serviceVersion: '1.2.3',
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'gatehouse-test',
      },
    });
    assert.equal(handle.enabled, true);
    assert.equal(isTracingActive(), true);
    assert.equal(handle.tracesUrl, `${receiver.url}/v1/traces`);
    const incoming: TraceContext = {
      traceparent: {
        version: '00',
        traceId: '0af7651916cd43dd8448eb211c80319c',
        parentId: 'b7ad6b7169203331',
        traceFlags: 1,
      },
      tracestate: [],
    };
    const span = trace
      .getTracer('gatehouse')
      .startSpan(
        'publish event',
        { attributes: { 'gw.topic': 'orders' } },
        contextWithRemoteParent(incoming, ROOT_CONTEXT),
      );
    assert.equal(span.isRecording(), true);
    const hop = hopTraceContext(span, incoming);
    span.end();
    await handle.shutdown();
    await handle.shutdown();

    const posts = receiver.received.filter((r) => r.url === '/v1/traces');
    assert.equal(
      posts.length,
      1,
      `one export expected, got ${receiver.received.map((r) => r.url).join(', ')}`,
    );
    assert.equal(posts[0]!.method, 'POST');
    assert.match(String(posts[0]!.headers['content-type']), /^application\/json/);
    const { spans, resource } = spansOf(posts[0]!.body);
    assert.equal(spans.length, 1);
    const exported = spans[0]!;
    assert.equal(exported.name, 'publish event');
    assert.equal(exported.traceId, incoming.traceparent.traceId);
    assert.equal(exported.parentSpanId, incoming.traceparent.parentId);
    assert.equal(
      exported.spanId,
      hop.traceparent.parentId,
      'the emitted hop context names the exported span',
    );
    assert.deepEqual(exported.attributes, [{ key: 'gw.topic', value: { stringValue: 'orders' } }]);
    const attribute = (key: string) => resource.find((a) => a.key === key)?.value.stringValue;
    assert.equal(attribute('service.name'), 'gatehouse-test', 'OTEL_SERVICE_NAME wins over the code');
    assert.equal(attribute('service.version'), '1.2.3');
    assert.equal(attribute('service.instance.id'), 'hub-7f3a', 'the replica id, not a random one');
    assert.ok(attribute('host.name'), 'the host is described too');
    assert.equal(isTracingActive(), false, 'off again after shutdown');

    const afterShutdown = trace.getTracer('gatehouse').startSpan('late');
    assert.equal(afterShutdown.isRecording(), false, 'the API is back to no-op after shutdown');
  });

  it('can start again in the same process after a shutdown', async () => {
    const before = receiver.received.length;
    const handle = await startTracing({
      serviceName: 'again',
      endpoint: receiver.url,
      env: { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
    });
    trace.getTracer('gatehouse').startSpan('second run').end();
    await handle.shutdown();
    const posts = receiver.received.slice(before).filter((r) => r.url === '/v1/traces');
    assert.equal(posts.length, 1);
    const { spans, resource } = spansOf(posts[0]!.body);
    assert.equal(spans[0]!.name, 'second run');
    assert.equal(resource.find((a) => a.key === 'service.name')?.value.stringValue, 'again');
  });
});
