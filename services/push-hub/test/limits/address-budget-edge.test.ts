/**
 * The per-address connect budget (MAX_CONNECTIONS_PER_IP_PER_MINUTE): one client address cannot
 * spend everyone's connection budget. It counts every connect attempt from the address on every
 * transport, socket.io's engine handshakes included, before any costlier check; other addresses
 * are not affected. Behind a trusted proxy (TRUSTED_PROXIES) the client's address is read from
 * X-Forwarded-For; from anyone else that header is ignored.
 */
import assert from 'node:assert/strict';
import { get } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { type HubFixture, startHubFixture, subs } from '../hub-fixture.ts';

const wanted = subs([{ eventType: 'greeting' }]);

/** The status of a GET from `localAddress` (a loopback address of the test's choice); the connection is dropped. */
function statusOf(
  url: string,
  options: { localAddress?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; retryAfter: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get(
      url,
      { localAddress: options.localAddress ?? '127.0.0.1', headers: options.headers },
      (res) => {
        const retryAfter = res.headers['retry-after'];
        if (res.statusCode === 200 && res.headers['content-type']?.startsWith('text/event-stream')) {
          req.destroy();
          return resolve({ status: 200, retryAfter, body: '' });
        }
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, retryAfter, body }));
      },
    );
    req.on('error', reject);
  });
}

describe('per-address connect budget', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({ MAX_CONNECTIONS_PER_IP_PER_MINUTE: '3', TRUSTED_PROXIES: '127.0.0.9/32' });
  });
  after(() => f?.stop());

  it('refuses an address past its budget, on every transport, while other addresses go on', async () => {
    const sse = `${f.url}/_gw/v1/connection/sse?subscriptions=${wanted}`;
    const from = (localAddress: string) => statusOf(sse, { localAddress });
    assert.deepEqual(
      [(await from('127.0.0.2')).status, (await from('127.0.0.2')).status, (await from('127.0.0.2')).status],
      [200, 200, 200],
    );
    const refused = await from('127.0.0.2');
    assert.equal(refused.status, 429);
    assert.match(refused.body, /from this address/);
    assert.ok(Number(refused.retryAfter) >= 1, 'with Retry-After');
    const longPoll = await statusOf(`${f.url}/_gw/v1/connection/longpolling?subscriptions=${wanted}`, {
      localAddress: '127.0.0.2',
    });
    assert.equal(longPoll.status, 429, 'long-polling shares the budget');
    assert.equal((await from('127.0.0.3')).status, 200, 'another address is not affected');
  });

  it('counts socket.io engine handshakes', async () => {
    const handshake = `${f.url}/_gw/v1/socket.io/?EIO=4&transport=polling`;
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await statusOf(handshake, { localAddress: '127.0.0.4' })).status);
    assert.deepEqual(statuses, [200, 200, 200, 429]);
  });

  it('reads the client address from X-Forwarded-For only behind a trusted proxy', async () => {
    const sse = `${f.url}/_gw/v1/connection/sse?subscriptions=${wanted}`;
    const viaProxy = (client: string) =>
      statusOf(sse, { localAddress: '127.0.0.9', headers: { 'x-forwarded-for': `10.9.9.9, ${client}` } });
    for (let i = 0; i < 3; i++) assert.equal((await viaProxy('203.0.113.1')).status, 200);
    assert.equal(
      (await viaProxy('203.0.113.1')).status,
      429,
      'the client behind the proxy has spent its own',
    );
    assert.equal((await viaProxy('203.0.113.2')).status, 200, 'another client behind the same proxy has not');
    // Anyone else's X-Forwarded-For is ignored: the header cannot buy a fresh budget.
    const spoofed = (client: string) =>
      statusOf(sse, { localAddress: '127.0.0.5', headers: { 'x-forwarded-for': client } });
    for (let i = 0; i < 3; i++) assert.equal((await spoofed(`198.51.100.${i}`)).status, 200);
    assert.equal((await spoofed('198.51.100.99')).status, 429);
  });
});
