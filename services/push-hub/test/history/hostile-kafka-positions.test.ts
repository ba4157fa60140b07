/**
 * Client-chosen Kafka positions in history's `before` and a connect's `since`, on one push-hub
 * process with real Kafka as its fan-out stream (a buffer of 4 events, so reads go to the broker):
 * offsets past int64, partitions the topic does not have, the origin, a forged epoch, a list of
 * 10,000 partitions and malformed text. Each is a 400, a 409 (another epoch), a page bounded by
 * `limit`, or `gw.resync_required` naming why; nothing is replayed across a forged epoch and the
 * process keeps serving.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signJwt, withExpiry } from '@gatehouse/auth';
import type { KafkaBus } from '@gatehouse/bus/all';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import { openSse, type ServiceProcess, uniqueName, waitFor } from '@gatehouse/testkit';
import { kafkaHubEnv, startKafkaHub } from './kafka-hub.ts';

const run = uniqueName('hostile-kafka-positions');
const jwtSecret = 'hostile-kafka-positions-jwt-secret-long';
const env = kafkaHubEnv(run, jwtSecret, { EVENT_BUFFER_SIZE: '4' });
const type = `${run}.t`;
const jwt = signJwt(withExpiry({ jti: `${run}-session` }), { alg: 'HS256', key: jwtSecret });

interface Page {
  events: Array<{ position: string; event: { id: string } }>;
}

describe('hostile Kafka positions in before and since', () => {
  let kafka: KafkaBus;
  let hub: ServiceProcess;
  /** Positions of the 10 events, oldest first. */
  let positions: string[] = [];

  const history = (query: string) =>
    fetch(`${hub.publicUrl}/_gw/v1/history?eventType=${type}&${query}`, {
      headers: { authorization: `Bearer ${jwt}` },
    });

  before(async () => {
    ({ kafka, hub } = await startKafkaHub(run, env));
    for (let i = 0; i < 10; i++) {
      const event = { specversion: '1.0', id: `${run}-${i}`, source: run, type, data: {} };
      await kafka.publish(env['FANOUT_TOPIC']!, {
        value: JSON.stringify(event),
        headers: streamEventHeaders(event),
      });
    }
    await waitFor(async () => {
      const page = (await (await history('limit=10')).json()) as Page;
      positions = page.events.map((e) => e.position).reverse();
      return positions.length === 10;
    });
  });
  after(async () => {
    await hub?.stop();
    await kafka?.close();
  });

  it('answers a before past int64, of another partition or the origin with a bounded page, and one of a forged epoch with a 409', async () => {
    const epoch = positions[0]!.split('.')[1];
    const forged = epoch === 'deadbeef' ? 'feedface' : 'deadbeef';
    const cases: Array<[string, number]> = [
      ['0-9999999999999999999', 3],
      ['999999999-0', 3],
      ['0--1', 0],
    ];
    for (const [position, count] of cases) {
      const res = await history(`limit=3&before=${encodeURIComponent(position)}`);
      assert.equal(res.status, 200, position);
      assert.equal(((await res.json()) as Page).events.length, count, position);
    }
    // Another epoch than the stream's: no page of this stream passes for one of that one.
    const foreign = await history(`limit=3&before=${encodeURIComponent(`0-0.${forged}`)}`);
    assert.equal(foreign.status, 409);
    assert.match(await foreign.text(), /epoch/);
    const partitions = (n: number) => Array.from({ length: n }, (_, p) => `${p}-0`).join(',');
    // 10,000 partitions do not fit the request head (431); 500 are not a position (400).
    const huge = await history(`before=${encodeURIComponent(partitions(10_000))}`);
    assert.ok(huge.status === 431 || huge.status === 400, `status ${huge.status}`);
    await huge.arrayBuffer();
    for (const position of [partitions(500), '0-1e3', '-1', 'NaN', '0-0x10', ' 0-1', '0-1.DEADBEEF']) {
      const res = await history(`before=${encodeURIComponent(position)}`);
      assert.equal(res.status, 400, position.slice(0, 40));
      assert.match(await res.text(), /^before/);
    }
    assert.equal((await fetch(`${hub.publicUrl}/_gw/health`)).status, 200, 'the process still serves');
  });

  it('tells a since the topic cannot have to resync, naming why, and replays nothing across an epoch', async () => {
    const epoch = positions[0]!.split('.')[1];
    const forged = epoch === 'deadbeef' ? 'feedface' : 'deadbeef';
    const cases: Array<[string, string]> = [
      ['0-9999999999999999999', 'unknown-position'],
      ['999999999-0', 'unknown-position'],
      [`${positions[3]!.split('.')[0]}.${forged}`, 'epoch-changed'],
    ];
    for (const [since, reason] of cases) {
      const query = new URLSearchParams({ subscriptions: JSON.stringify([{ eventType: type }]), since });
      const sse = await openSse(`${hub.publicUrl}/_gw/v1/connection/sse?${query}`, {
        authorization: `Bearer ${jwt}`,
      });
      try {
        assert.equal(sse.status, 200, sse.errorBody);
        await waitFor(() => sse.events('gw.resync_required').length === 1, { what: `${since}: resync` });
        const [resync] = sse.events('gw.resync_required') as Array<{ data: { reason: string } }>;
        assert.equal(resync!.data.reason, reason, since);
        assert.equal(sse.events(type).length, 0, `${since}: nothing replayed`);
      } finally {
        sse.close();
      }
    }
    assert.equal((await fetch(`${hub.publicUrl}/_gw/health`)).status, 200, 'the process still serves');
  });
});
