/**
 * What fuzzing the public edge found in the push hub's transports, each a reproducer through the
 * public surface that guards its fix: a long poll whose cursor needs a broker replay that does not
 * progress (a stream with no event yet) is answered within the poll window and gives its replay
 * reader back; a socket.io polling request with a method engine.io does not serve is a 405.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '../src/index.ts';

describe('public edge findings', () => {
  let gw: EmbeddedGateway;
  let edge: string;
  before(async () => {
    gw = await startEmbeddedGateway({ ...ephemeralGatewaySettings, LONGPOLL_TIMEOUT: '500ms' });
    edge = `http://127.0.0.1:${gw.publicPort}`;
  });
  after(() => gw?.stop());

  /** A new long-poll connection's cookie. */
  async function longPollToken(): Promise<string> {
    const res = await fetch(`${edge}/_gw/v1/connection/longpolling`, { signal: AbortSignal.timeout(10_000) });
    await res.text();
    const cookie = res.headers.getSetCookie()[0]?.split(';')[0] ?? '';
    assert.match(cookie, /^connection_token=./);
    return cookie;
  }

  it('answers a poll of a live long-poll connection within LONGPOLL_TIMEOUT while the stream is empty', async () => {
    const answers: number[] = [];
    for (const cursor of ['0', '0', '5']) {
      const res = await fetch(`${edge}/_gw/v1/connection/longpolling`, {
        headers: { cookie: `${await longPollToken()}; last_event_id=${cursor}` },
        signal: AbortSignal.timeout(3_000),
      }).catch((err: Error) => err);
      answers.push(res instanceof Response ? res.status : 0);
      if (res instanceof Response) await res.text();
    }
    // The third poll's cursor is past the stream's end (a resync), but both readers are taken.
    assert.deepEqual(answers, [200, 200, 200], 'every poll answered within 3 s (0: none did)');
  });

  it('answers a socket.io polling request of a live session with a method engine.io does not serve with 4xx, not 500', async () => {
    const handshake = await fetch(`${edge}/_gw/v1/socket.io/?EIO=4&transport=polling`);
    const sid = /"sid":"([^"]+)"/.exec(await handshake.text())?.[1];
    assert.ok(sid, 'an engine.io session');
    const statuses: Record<string, number> = {};
    for (const method of ['PUT', 'DELETE', 'PATCH', 'HEAD']) {
      const res = await fetch(`${edge}/_gw/v1/socket.io/?EIO=4&transport=polling&sid=${sid}`, {
        method,
        signal: AbortSignal.timeout(10_000),
      });
      await res.text();
      statuses[method] = res.status;
    }
    for (const [method, status] of Object.entries(statuses))
      assert.ok(status >= 400 && status < 500, `${method}: ${JSON.stringify(statuses)}`);
  });
});
