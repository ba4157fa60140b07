/**
 * The second trace backend: the proxy as a real process with OTEL_TRACES_EXPORTER=zipkin, its spans
 * sent by the Zipkin exporter to the real Zipkin server of tools/deps.sh (`zipkin`) and read back
 * through Zipkin's query API: a forwarded request is a SERVER span under the caller and a CLIENT span
 * under it, under the proxy's service name. An unknown exporter name stops start-up, naming the
 * variable.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  dependencyAddress,
  describeTrace,
  type ExportedSpan,
  fetchZipkinTrace,
  type ServiceProcess,
  spawnService,
  waitFor,
} from '@gatehouse/testkit';
import { runProxyExpectingExit } from './proxy-process.ts';
import { startBackend, type TestBackend } from './test-backend.ts';

const traceId = randomBytes(16).toString('hex');
const callerSpan = randomBytes(8).toString('hex');
const replica = `proxy-zipkin-${randomBytes(3).toString('hex')}`;

describe('proxy tracing to Zipkin', () => {
  let backend: TestBackend;
  let proxy: ServiceProcess;
  before(async () => {
    backend = await startBackend();
    const apis = [
      {
        id: 'zipkin-traced',
        name: 'zipkin-traced',
        version_data: { default: { endpoints: [{ id: 'echo', method: 'GET', path_regex: '/echo/(.*)' }] } },
        proxy: { target_url: '127.0.0.1', port: backend.port },
      },
    ];
    proxy = await spawnService({
      entry: 'services/proxy/src/main.ts',
      publicPort: true,
      env: {
        STORE: 'memory',
        CONTROL_BUS: 'memory',
        TOKEN_SECRET: 'proxy-zipkin-test-token-secret',
        PROXY_TARGET_ALLOW: '127.0.0.1',
        PROXY_CONFIG_FILE: JSON.stringify(apis),
        REPLICA_ID: replica,
        OTEL_TRACES_EXPORTER: 'zipkin',
        OTEL_EXPORTER_ZIPKIN_ENDPOINT: `${dependencyAddress.zipkinUrl}/api/v2/spans`,
        // Short batches: the spans reach Zipkin moments after the request.
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
    });
  });
  after(async () => {
    await proxy?.stop();
    await backend?.close();
  });

  it('exports the server and client spans of a forwarded request, found by trace id', async () => {
    const headers = { traceparent: `00-${traceId}-${callerSpan}-01` };
    assert.equal((await fetch(`${proxy.publicUrl}/echo/x`, { headers })).status, 200);

    let spans: ExportedSpan[] = [];
    await waitFor(
      async () => {
        spans = await fetchZipkinTrace(traceId);
        return spans.length >= 2;
      },
      { timeoutMs: 15_000, intervalMs: 200, what: `trace ${traceId} in Zipkin` },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${describeTrace(spans)}\nproxy output:\n${proxy.output()}`);
    });
    assert.equal(spans.length, 2, describeTrace(spans));
    // Zipkin keeps span names in lower case.
    const server = spans.find((s) => s.kind === 'server');
    assert.ok(server, `a SERVER span in\n${describeTrace(spans)}`);
    assert.equal(server.name, 'get /echo/(.*)');
    assert.equal(server.service, 'proxy');
    assert.equal(server.traceId, traceId);
    assert.equal(server.parentSpanId, callerSpan, "the request's span continues the caller's");
    assert.equal(server.attributes['url.path'], '/echo/x');
    assert.equal(server.attributes['http.response.status_code'], '200');
    assert.equal(server.attributes['gw.api.id'], 'zipkin-traced');
    assert.equal(server.resource['service.instance.id'], replica);

    const client = spans.find((s) => s.kind === 'client');
    assert.ok(client, `a CLIENT span in\n${describeTrace(spans)}`);
    assert.equal(client.service, 'proxy');
    assert.equal(client.parentSpanId, server.spanId, 'the forward is a child of the request');
    assert.equal(client.attributes['url.full'], `http://127.0.0.1:${backend.port}/echo/x`);
    assert.equal(
      backend.seen.at(-1)!.headers.traceparent,
      `00-${traceId}-${client.spanId}-01`,
      'the backend continues the client span',
    );
  });

  it('refuses to start with an exporter it does not know, naming OTEL_TRACES_EXPORTER', async () => {
    const { code, output } = await runProxyExpectingExit({
      STORE: 'memory',
      CONTROL_BUS: 'memory',
      OTEL_TRACES_EXPORTER: 'jaeger',
    });
    assert.equal(code, 2, output);
    assert.match(output, /OTEL_TRACES_EXPORTER: must be one of otlp, zipkin, none \(got 'jaeger'\)/);
  });
});
