/**
 * The HTTP relay streams the upstream answer: a client that stops reading holds the upstream back
 * (backpressure) instead of making the engine take in the whole answer, and a client that reads
 * gets every byte; a client that leaves before the upstream answered releases the upstream answer.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { MiB, mib, sleep } from '@gatehouse/testkit';
import { configFolder, type RunningEngine, startEngine } from '../engine-fixture.ts';

const answerSize = 64 * MiB;
const chunk = Buffer.alloc(64 * 1024, 'r');

/** An upstream that sends `answerSize` bytes as fast as its client takes them, and counts them. */
function bigUpstream() {
  const sent: number[] = [];
  const server = createServer((_req, res) => {
    const index = sent.push(0) - 1;
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': answerSize });
    const pump = () => {
      while (sent[index]! < answerSize) {
        sent[index]! += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    res.on('close', () => res.off('drain', pump));
    pump();
  });
  return { server, sent };
}

describe('HTTP relay under large answers', () => {
  let upstream: ReturnType<typeof bigUpstream>;
  let run: RunningEngine;
  before(async () => {
    upstream = bigUpstream();
    await new Promise<void>((resolve) => upstream.server.listen(0, '127.0.0.1', resolve));
    const port = (upstream.server.address() as AddressInfo).port;
    const dir = configFolder({
      'application.yml': 'rest.automation: true\n',
      'rest.yaml': `rest:\n  - { service: "http://127.0.0.1:${port}", methods: [GET], url: /big, timeout: 30s }\n`,
    });
    run = await startEngine({ REST_CONFIG_FOLDER: dir });
  });
  after(async () => {
    await run.stop();
    upstream.server.closeAllConnections();
    await new Promise<void>((resolve) => (upstream.server as Server).close(() => resolve()));
  });

  it('holds the upstream back while the client does not read', async () => {
    const controller = new AbortController();
    const res = await fetch(`${run.base}/big`, { signal: controller.signal });
    assert.equal(res.status, 200);
    // Headers came; the body is left unread for 2 s.
    await sleep(2_000);
    const sent = upstream.sent.at(-1)!;
    console.log(`relay, client not reading: upstream sent ${mib(sent)} of ${mib(answerSize)} in 2 s`);
    controller.abort();
    assert.ok(sent < 24 * MiB, `the upstream sent ${mib(sent)} for a client that read nothing`);
  });

  it('passes every byte to a client that reads', async () => {
    const res = await fetch(`${run.base}/big`);
    assert.equal(res.status, 200);
    const hash = createHash('sha256');
    let length = 0;
    for await (const part of res.body!) {
      hash.update(part);
      length += part.length;
    }
    assert.equal(length, answerSize);
    const expected = createHash('sha256');
    for (let n = 0; n < answerSize; n += chunk.length) expected.update(chunk);
    assert.equal(hash.digest('hex'), expected.digest('hex'));
  });
});

describe('HTTP relay when the client leaves before the upstream answers', () => {
  let closedAt: number | undefined;
  let run: RunningEngine;
  // Answers after 500 ms, then streams without end until its client goes (which may be sooner).
  const upstream = createServer((_req, res) => {
    let timer: NodeJS.Timeout | undefined;
    const answer = setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      timer = setInterval(() => res.write(chunk), 20);
    }, 500);
    res.on('close', () => {
      clearTimeout(answer);
      clearInterval(timer);
      closedAt = Date.now();
    });
  });
  before(async () => {
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const port = (upstream.address() as AddressInfo).port;
    const dir = configFolder({
      'application.yml': 'rest.automation: true\n',
      'rest.yaml': `rest:\n  - { service: "http://127.0.0.1:${port}", methods: [GET], url: /late, timeout: 30s }\n`,
    });
    run = await startEngine({ REST_CONFIG_FOLDER: dir });
  });
  after(async () => {
    await run.stop();
    upstream.closeAllConnections();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  it('releases the upstream request instead of leaving it open', async () => {
    const controller = new AbortController();
    const asked = fetch(`${run.base}/late`, { signal: controller.signal }).catch(() => undefined);
    await sleep(100);
    const leftAt = Date.now();
    controller.abort();
    await asked;
    const deadline = Date.now() + 10_000;
    while (closedAt === undefined && Date.now() < deadline) await sleep(50);
    assert.ok(closedAt !== undefined, 'the upstream request is still open 10 s after the client left');
    assert.ok(closedAt - leftAt < 3_000, `closed ${closedAt - leftAt} ms after the client left`);
  });
});
