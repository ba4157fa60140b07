/**
 * The proxy process with tracing on (OTEL_EXPORTER_OTLP_ENDPOINT at a local OTLP receiver): a
 * forwarded request is a SERVER span under the caller and a CLIENT span under it, whose context the
 * backend receives; a target that is down fails both. The batch delay is an hour, so the spans can
 * only arrive through the flush of the graceful shutdown.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type OtlpReceiver, startOtlpReceiver } from '@gatehouse/testkit';
import { type ProxyProcess, startProxy } from './proxy-process.ts';
import { startBackend, type TestBackend } from './test-backend.ts';

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const callerSpan = '00f067aa0ba902b7';

describe('proxy tracing', () => {
  let receiver: OtlpReceiver;
  let backend: TestBackend;
  let proxy: ProxyProcess;
  before(async () => {
    receiver = await startOtlpReceiver();
    backend = await startBackend();
    const apis = [
      {
        id: 'traced',
        name: 'traced',
        version_data: { default: { endpoints: [{ id: 'echo', method: 'GET', path_regex: '/echo/(.*)' }] } },
        proxy: { target_url: '127.0.0.1', port: backend.port },
      },
      {
        id: 'down',
        name: 'down',
        version_data: { default: { endpoints: [{ id: 'gone', method: 'GET', path_regex: '/down' }] } },
        proxy: { target_url: '127.0.0.1', port: 1 },
      },
    ];
    proxy = await startProxy({
      STORE: 'memory',
      CONTROL_BUS: 'memory',
      PROXY_CONFIG_FILE: JSON.stringify(apis),
      REPLICA_ID: 'proxy-traced-1',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      ...receiver.env,
      OTEL_BSP_SCHEDULE_DELAY: '3600000',
    });
  });
  after(async () => {
    await proxy?.stop();
    await backend?.close();
    await receiver?.close();
  });

  it('exports the server and client spans of forwarded requests when it shuts down', async () => {
    const headers = { traceparent: `00-${traceId}-${callerSpan}-01`, tracestate: 'e2e=1' };
    assert.equal((await fetch(`${proxy.publicUrl}/echo/x`, { headers })).status, 200);
    assert.equal((await fetch(`${proxy.publicUrl}/down`, { headers })).status, 502);
    const seen = backend.seen.at(-1)!;
    assert.equal(receiver.spans.length, 0, 'nothing sent before the batch is due');

    assert.equal(await proxy.stop(), 0);
    const spans = receiver.spans.filter((s) => s.traceId === traceId);
    const servers = spans.filter((s) => s.kind === 'server');
    const clients = spans.filter((s) => s.kind === 'client');
    assert.deepEqual(servers.map((s) => s.name).sort(), ['GET /down', 'GET /echo/(.*)']);
    assert.equal(clients.length, 2);
    const server = servers.find((s) => s.name === 'GET /echo/(.*)')!;
    assert.equal(server.parentSpanId, callerSpan);
    assert.equal(server.attributes['url.path'], '/echo/x');
    assert.equal(server.attributes['http.response.status_code'], 200);
    assert.equal(server.attributes['gw.api.id'], 'traced');
    assert.equal(server.resource['service.name'], 'proxy');
    assert.equal(server.resource['service.instance.id'], 'proxy-traced-1');
    assert.equal(server.resource['service.version'], '0.1.0');
    const client = clients.find((s) => s.parentSpanId === server.spanId)!;
    assert.ok(client, 'the forward is a child of the request');
    assert.equal(client.attributes['url.full'], `http://127.0.0.1:${backend.port}/echo/x`);
    assert.equal(seen.headers.traceparent, `00-${traceId}-${client.spanId}-01`, 'the backend continues it');
    assert.equal(seen.headers.tracestate, 'e2e=1');

    const down = servers.find((s) => s.name === 'GET /down')!;
    assert.equal(down.failed, true, 'a 502 fails the server span');
    const refused = clients.find((s) => s.parentSpanId === down.spanId)!;
    assert.equal(refused.failed, true);
    assert.equal(refused.attributes['error.type'], 'unreachable');
  });
});
