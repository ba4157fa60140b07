import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connectNats } from '../src/all.ts';

describe('connectNats with TLS settings', () => {
  // A server that accepts connections and never says a word (no INFO): a stuck broker.
  const sockets: Socket[] = [];
  const silent = createServer((socket) => void sockets.push(socket));
  let url: string;
  before(async () => {
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    url = `tls://127.0.0.1:${(silent.address() as { port: number }).port}`;
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('gives up on a server that never answers: the TLS probe is bounded, then the client times out', async () => {
    const started = Date.now();
    await assert.rejects(connectNats({ servers: url, tls: {}, timeout: 1000 }));
    // The probe's 5 s, the client's 1 s, with room for a loaded machine.
    assert.ok(Date.now() - started < 20_000, `gave up after ${Date.now() - started} ms`);
  });
});
