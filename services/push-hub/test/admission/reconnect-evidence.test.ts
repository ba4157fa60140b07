/**
 * A connection token is reconnect evidence only from the address it was issued to: a copy replayed
 * from another address does not move that address's connects from MAX_CONNECTIONS_PER_MINUTE to the
 * larger MAX_RECONNECTS_PER_MINUTE. Through the hub's own port, from distinct loopback addresses.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, it } from 'node:test';
import { waitFor } from '@gatehouse/testkit';
import { startHubFixture, subs } from '../hub-fixture.ts';

const wanted = subs([{ eventType: 'greeting' }]);

/** An SSE connect from `from`: its status, and the stream's text so far. */
function sse(url: string, from: string): Promise<{ status: number; text(): string; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress: from, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('error', () => {});
      resolve({ status: res.statusCode ?? 0, text: () => text, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('reconnect evidence', () => {
  it('counts a connection token as a reconnect only from the address it was issued to', async () => {
    const f = await startHubFixture({ MAX_CONNECTIONS_PER_MINUTE: '1', MAX_RECONNECTS_PER_MINUTE: '100' });
    try {
      const url = `${f.url}/_gw/v1/connection/sse?subscriptions=${wanted}`;
      const first = await sse(url, '127.0.5.2');
      assert.equal(first.status, 200);
      await waitFor(() => first.text().includes('connection_token'), { what: 'the welcome' });
      const token = /"connection_token":"([^"]+)"/.exec(first.text())![1]!;
      assert.equal((await sse(url, '127.0.5.3')).status, 429, 'the new-connection budget is spent');

      const replayed = await sse(`${url}&connectionToken=${token}`, '127.0.5.3');
      assert.equal(replayed.status, 429, 'a token replayed from another address is a new connection');
      const back = await sse(`${url}&connectionToken=${token}`, '127.0.5.2');
      assert.equal(back.status, 200, 'from its own address it is a reconnect');
      assert.equal(await f.metric('gw_connects_admitted_total', 'kind="reconnect"'), 1);
      for (const c of [first, replayed, back]) c.close();
    } finally {
      await f.stop();
    }
  });
});
