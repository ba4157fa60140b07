/**
 * Choosing the exporter (trace-export.ts): OTEL_TRACES_EXPORTER `otlp` (the default), `zipkin` or
 * `none`, the Zipkin exporter's OTEL_EXPORTER_ZIPKIN_ENDPOINT, and every unusable combination refused
 * at start naming the variable; then the Zipkin exporter on the wire, against a local server.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { contextWithRemoteParent, startTracing, traceExport, traceExporterName } from '../src/index.ts';

const zipkin = 'http://zipkin:9411/api/v2/spans';

describe('OTEL_TRACES_EXPORTER', () => {
  it('is otlp when unset or blank, and reads the names in any case', () => {
    assert.equal(traceExporterName({}), 'otlp');
    assert.equal(traceExporterName({ OTEL_TRACES_EXPORTER: ' ' }), 'otlp');
    assert.equal(traceExporterName({ OTEL_TRACES_EXPORTER: ' Zipkin ' }), 'zipkin');
    assert.equal(traceExporterName({ OTEL_TRACES_EXPORTER: 'OTLP' }), 'otlp');
    assert.equal(traceExporterName({ OTEL_TRACES_EXPORTER: 'none' }), 'none');
  });

  it('refuses any other name, and more than one, naming the variable and what it takes', () => {
    for (const value of ['jaeger', 'console', 'otlp,zipkin', 'zipkin2'])
      assert.throws(
        () => traceExporterName({ OTEL_TRACES_EXPORTER: value }),
        { message: `OTEL_TRACES_EXPORTER: must be one of otlp, zipkin, none (got '${value}')` },
        value,
      );
  });

  it('refuses a bad name when tracing starts, even with an OTLP endpoint set', async () => {
    await assert.rejects(
      startTracing({
        serviceName: 'x',
        env: { OTEL_TRACES_EXPORTER: 'jaeger', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1' },
      }),
      /OTEL_TRACES_EXPORTER: must be one of otlp, zipkin, none \(got 'jaeger'\)/,
    );
  });

  it('is not read when OTEL_SDK_DISABLED switches tracing off', () => {
    assert.equal(traceExport({}, { OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'jaeger' }), undefined);
  });
});

describe('the Zipkin exporter settings', () => {
  it('sends to OTEL_EXPORTER_ZIPKIN_ENDPOINT as it is, whatever the OTLP settings say', () => {
    const env = {
      OTEL_TRACES_EXPORTER: 'zipkin',
      OTEL_EXPORTER_ZIPKIN_ENDPOINT: ` ${zipkin} `,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    };
    assert.deepEqual(traceExport({ endpoint: 'http://option:4318' }, env), {
      exporter: 'zipkin',
      url: zipkin,
    });
  });

  it('needs OTEL_EXPORTER_ZIPKIN_ENDPOINT when zipkin is chosen', () => {
    assert.throws(
      () => traceExport({}, { OTEL_TRACES_EXPORTER: 'zipkin' }),
      /OTEL_TRACES_EXPORTER is zipkin: set OTEL_EXPORTER_ZIPKIN_ENDPOINT to the Zipkin span URL/,
    );
  });

  it('refuses an endpoint that is not an http(s) URL of the span API', () => {
    const refused = (endpoint: string, message: RegExp) =>
      assert.throws(
        () => traceExport({}, { OTEL_TRACES_EXPORTER: 'zipkin', OTEL_EXPORTER_ZIPKIN_ENDPOINT: endpoint }),
        message,
        endpoint,
      );
    refused('zipkin:9411/api/v2/spans', /OTEL_EXPORTER_ZIPKIN_ENDPOINT: must be an http\(s\) URL/);
    refused('udp://zipkin:9411/api/v2/spans', /OTEL_EXPORTER_ZIPKIN_ENDPOINT: must be an http\(s\) URL/);
    refused('http://[bad/api/v2/spans', /OTEL_EXPORTER_ZIPKIN_ENDPOINT: not a valid URL/);
    refused(
      'http://zipkin:9411/',
      /OTEL_EXPORTER_ZIPKIN_ENDPOINT: must be the full span URL, e\.g\. http:\/\/zipkin:9411\/api\/v2\/spans/,
    );
    refused('http://zipkin:9411', /must be the full span URL/);
  });

  it('refuses a Zipkin endpoint left without an exporter chosen, and ignores it once one is', () => {
    assert.throws(
      () => traceExport({}, { OTEL_EXPORTER_ZIPKIN_ENDPOINT: zipkin }),
      /OTEL_EXPORTER_ZIPKIN_ENDPOINT is set but OTEL_TRACES_EXPORTER is not: set OTEL_TRACES_EXPORTER=zipkin/,
    );
    const otlp = { OTEL_EXPORTER_ZIPKIN_ENDPOINT: zipkin, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    assert.deepEqual(traceExport({}, { ...otlp, OTEL_TRACES_EXPORTER: 'otlp' }), {
      exporter: 'otlp',
      url: 'http://c:4318/v1/traces',
    });
    assert.equal(traceExport({}, { ...otlp, OTEL_TRACES_EXPORTER: 'none' }), undefined);
  });

  it('keeps the OTLP defaults: on only with an endpoint', () => {
    assert.equal(traceExport({}, {}), undefined);
    assert.equal(traceExport({}, { OTEL_TRACES_EXPORTER: 'otlp' }), undefined);
    assert.deepEqual(traceExport({ endpoint: 'http://c:4318' }, {}), {
      exporter: 'otlp',
      url: 'http://c:4318/v1/traces',
    });
  });
});

describe('the Zipkin exporter on the wire', () => {
  const received: Array<{ url: string | undefined; headers: IncomingHttpHeaders; body: string }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ url: req.url, headers: req.headers, body });
      res.writeHead(202).end();
    });
  });
  let url: string;
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2/spans`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('posts Zipkin v2 JSON with the service name, kind and parent, flushed at shutdown', async () => {
    const handle = await startTracing({
      serviceName: 'zipkin-wire',
      serviceInstanceId: 'wire-1',
      env: { OTEL_TRACES_EXPORTER: 'zipkin', OTEL_EXPORTER_ZIPKIN_ENDPOINT: url },
    });
    assert.equal(handle.exporter, 'zipkin');
    assert.equal(handle.tracesUrl, url);
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const parent = contextWithRemoteParent(
      {
        traceparent: { version: '00', traceId, parentId: 'b7ad6b7169203331', traceFlags: 1 },
        tracestate: [],
      },
      ROOT_CONTEXT,
    );
    trace
      .getTracer('gatehouse')
      .startSpan('GET /wire', { kind: SpanKind.SERVER, attributes: { 'url.path': '/wire' } }, parent)
      .end();
    await handle.shutdown();

    assert.equal(received.length, 1);
    assert.equal(received[0]!.url, '/api/v2/spans');
    assert.match(String(received[0]!.headers['content-type']), /^application\/json/);
    const [span, ...more] = JSON.parse(received[0]!.body) as Array<Record<string, unknown>>;
    assert.equal(more.length, 0);
    assert.equal(span!['traceId'], traceId);
    assert.equal(span!['parentId'], 'b7ad6b7169203331');
    assert.equal(span!['name'], 'GET /wire');
    assert.equal(span!['kind'], 'SERVER');
    assert.deepEqual(span!['localEndpoint'], { serviceName: 'zipkin-wire' });
    const tags = span!['tags'] as Record<string, string>;
    assert.equal(tags['url.path'], '/wire');
    assert.equal(tags['service.instance.id'], 'wire-1');
  });
});
