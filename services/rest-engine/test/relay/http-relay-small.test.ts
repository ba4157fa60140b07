/**
 * The HTTP relay takes an upstream answer that declares a small length (at most
 * `rest.relay.buffer-max-bytes`) in whole before answering: an upstream that sends less than it
 * declared gives the client an error answer instead of a 200 cut short, and a client that leaves
 * meanwhile releases the upstream at once. A limit of 0 streams every answer.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sleep } from '@gatehouse/testkit';
import { configFolder, type RunningEngine, startEngine } from '../engine-fixture.ts';

const declared = 1000;

/**
 * An upstream that declares `declared` bytes on every path and sends only 10: `/cut` then drops
 * the connection, `/stall` keeps it open (until its client goes; `closedAt` says when);
 * `/unchanged` answers 304 with the full answer's length.
 */
function shortUpstream() {
  const state: { closedAt?: number; headersAt?: number; open: Set<ServerResponse> } = { open: new Set() };
  const server = createServer((req, res) => {
    if (req.url === '/unchanged') {
      res.writeHead(304, { etag: '"v1"', 'content-length': declared });
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': declared });
    res.write(Buffer.alloc(10, 's'));
    state.headersAt = Date.now();
    if (req.url === '/cut') {
      setTimeout(() => res.socket?.destroy(), 50);
      return;
    }
    state.open.add(res);
    res.on('close', () => {
      state.open.delete(res);
      state.closedAt = Date.now();
    });
  });
  return { server, state };
}

async function engineBefore(upstream: Server, env: Record<string, string> = {}): Promise<RunningEngine> {
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const port = (upstream.address() as AddressInfo).port;
  const dir = configFolder({
    'application.yml': 'rest.automation: true\n',
    'rest.yaml': `rest:\n  - { service: "http://127.0.0.1:${port}", methods: [GET], url: "/{part}", timeout: 30s }\n`,
  });
  return startEngine({ REST_CONFIG_FOLDER: dir, ...env });
}

async function stopBoth(run: RunningEngine, upstream: Server): Promise<void> {
  await run.stop();
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
}

describe('HTTP relay of a small answer', () => {
  const upstream = shortUpstream();
  let run: RunningEngine;
  before(async () => {
    run = await engineBefore(upstream.server);
  });
  after(() => stopBoth(run, upstream.server));

  it('answers an error, not a 200 cut short, when the upstream sends less than it declared', async () => {
    const res = await fetch(`${run.base}/cut`, { signal: AbortSignal.timeout(20_000) });
    const body = await res.text();
    assert.ok(res.status >= 500, `status ${res.status}`);
    assert.equal(Number(res.headers.get('content-length')), Buffer.byteLength(body));
  });

  it('passes on a 304 with the length the upstream declared for the full answer', async () => {
    const res = await fetch(`${run.base}/unchanged`, { headers: { 'if-none-match': '"v1"' } });
    assert.equal(res.status, 304);
    assert.equal(res.headers.get('etag'), '"v1"');
    assert.equal(res.headers.get('content-length'), String(declared));
  });

  it('releases the upstream at once when the client leaves before the answer is complete', async () => {
    upstream.state.closedAt = undefined;
    const controller = new AbortController();
    const asked = fetch(`${run.base}/stall`, { signal: controller.signal }).catch(() => undefined);
    const deadline = Date.now() + 10_000;
    while (upstream.state.open.size === 0 && Date.now() < deadline) await sleep(20);
    assert.equal(upstream.state.open.size, 1, 'the upstream got the request');
    const left = Date.now();
    controller.abort();
    await asked;
    while (upstream.state.closedAt === undefined && Date.now() < deadline + 10_000) await sleep(50);
    assert.ok(
      upstream.state.closedAt !== undefined,
      'the upstream answer is still open after the client left',
    );
    assert.ok(upstream.state.closedAt - left < 3_000, `closed ${upstream.state.closedAt - left} ms after`);
  });
});

describe('HTTP relay with rest.relay.buffer-max-bytes 0', () => {
  const upstream = shortUpstream();
  let run: RunningEngine;
  before(async () => {
    run = await engineBefore(upstream.server, { REST_RELAY_BUFFER_MAX_BYTES: '0' });
  });
  after(() => stopBoth(run, upstream.server));

  it('streams even a small answer: its headers come before its body is complete', async () => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 5_000);
    try {
      const res = await fetch(`${run.base}/stall`, { signal: controller.signal });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-length'), String(declared));
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
  });
});
