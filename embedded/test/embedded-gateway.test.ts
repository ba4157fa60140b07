import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { waitFor } from '@gatehouse/testkit';
import { type EmbeddedGateway, startEmbeddedGateway } from '../src/index.ts';

describe('embedded gateway', () => {
  let gw: EmbeddedGateway;
  let edge: string;
  let api: string;
  before(async () => {
    gw = await startEmbeddedGateway({
      INBOUND_PORT: '0',
      API_PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
    });
    edge = `http://127.0.0.1:${gw.publicPort}`;
    api = `http://127.0.0.1:${gw.apiPort}`;
  });
  after(() => gw.stop());

  it('answers the edge health check', async () => {
    const res = await fetch(`${edge}/_gw/health`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'OK');
  });

  it('answers the internal health, readiness and metrics endpoints', async () => {
    assert.equal(await (await fetch(`${api}/health`)).text(), 'OK');
    const ready = await fetch(`${api}/ready`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { ready: true, checks: { store: 'ok', 'fanout-bus': 'ok' } });
    const metrics = await fetch(`${api}/metrics`);
    assert.match(metrics.headers.get('content-type') ?? '', /text\/plain/);
    assert.match(await metrics.text(), /^gw_process_cpu_user_seconds_total/m);
  });

  it('answers 404 for an unknown path and 431 for an oversized header value', async () => {
    assert.equal((await fetch(`${edge}/nowhere`)).status, 404);
    const big = await fetch(`${edge}/_gw/health`, { headers: { 'x-big': 'a'.repeat(16385) } });
    assert.equal(big.status, 431);
    const fits = await fetch(`${edge}/_gw/health`, { headers: { 'x-big': 'a'.repeat(16384) } });
    assert.equal(fits.status, 200);
  });

  it('stops with an error naming the variable when the configuration is invalid', async () => {
    await assert.rejects(
      startEmbeddedGateway({ API_PORT: 'forty', LOG_LEVEL: 'silent' }),
      /API_PORT: must be an integer/,
    );
  });

  it('exits cleanly on SIGTERM as a process', async () => {
    const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
    const child = spawn(process.execPath, [main], {
      env: { ...process.env, INBOUND_PORT: '0', API_PORT: '0', HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    await waitFor(() => out.includes('"listening"'), { what: 'the gateway to listen' });
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    assert.equal(code, 0);
    assert.match(out, /"msg":"stopped"/);
  });
});
