import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { freePort } from '../src/spawn-service.ts';

test('free ports come from below the ephemeral range and Kubernetes node ports, where nothing else takes one', async () => {
  // 200 picks: with the node port range (30000-32767) among them, one of them lands there all but surely.
  const ports = await Promise.all(Array.from({ length: 200 }, () => freePort()));
  for (const port of ports) assert.ok(port >= 20_000 && port < 30_000, String(port));
});

test('a free port can be listened on', async (t) => {
  const port = await freePort();
  const server = createServer();
  t.after(() => new Promise<void>((done) => server.close(() => done())));
  await new Promise<void>((listening, failed) => {
    server.once('error', failed);
    server.listen(port, '127.0.0.1', listening);
  });
});
