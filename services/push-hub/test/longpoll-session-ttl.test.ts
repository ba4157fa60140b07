/**
 * LONGPOLL_SESSION_TTL: a long-poll connection not polled for that long is forgotten, in the store
 * and on the replica, and its place among the address's connections (MAX_CONNECTIONS_PER_ADDRESS)
 * comes back; its client's next poll makes a new connection that resumes from its cursor. Polling
 * keeps it. Through the hub's own port, with a short TTL.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { sleep } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from './hub-fixture.ts';

const ttlMs = 1000;
const path = `/_gw/v1/connection/longpolling?subscriptions=${subs([{ eventType: 'greeting' }])}`;

/** A long-poll GET from `from`: status, body and the connection it names. */
function poll(
  f: HubFixture,
  from: string,
  pollToken?: string,
): Promise<{ status: number; body: string; token: string | undefined }> {
  return new Promise((resolve, reject) => {
    const url = `${f.url}${path}${pollToken ? `&pollToken=${pollToken}` : ''}`;
    const req = request(url, { localAddress: from, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body,
          token: res.headers['gatehouse-connection-token'] as string | undefined,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('long-poll session lifetime', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({
      LONGPOLL_TIMEOUT: '200ms',
      LONGPOLL_SESSION_TTL: `${ttlMs}ms`,
      MAX_CONNECTIONS_PER_ADDRESS: '1',
    });
  });
  after(() => f.stop());

  it('forgets a connection not polled for LONGPOLL_SESSION_TTL and gives its place back; polling keeps it', async () => {
    const from = '127.0.6.2';
    const created = await poll(f, from);
    assert.equal(created.body, '"ok"');
    const token = created.token!;
    // Polled more often than the TTL, across more than one TTL: it lives on.
    for (let i = 0; i < 4; i++) {
      const polled = await poll(f, from, token);
      assert.equal(polled.token, token, `poll ${i} is on the same connection`);
      assert.match(polled.body, /^\{"last_event_id"/);
      await sleep(ttlMs / 2);
    }
    assert.equal((await poll(f, from)).status, 429, 'the connection holds its place');

    // Past the TTL and the touch period after it (an eighth of the TTL): forgotten.
    await sleep(ttlMs * 1.125 + 1000);
    const again = await poll(f, from, token);
    assert.equal(again.status, 200);
    assert.equal(again.body, '"ok"', 'its next poll makes a new connection');
    assert.notEqual(again.token, token);
  });
});
