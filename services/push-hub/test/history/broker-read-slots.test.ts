/**
 * An attacker's burst of history queries that each read the broker (the buffer is empty, so every
 * page goes past it), on one push-hub process with real Kafka as its fan-out stream: at most
 * HISTORY_BROKER_READS broker reads run at once per replica, those beyond are our outage (503 with
 * Retry-After) at once instead of one more Kafka consumer each, and a rewinding connection beyond
 * is closed (its client comes back) rather than left waiting; the slots come back, and the process
 * keeps serving.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signJwt, withExpiry } from '@gatehouse/auth';
import type { KafkaBus } from '@gatehouse/bus/all';
import { openSse, type ServiceProcess, uniqueName, waitFor } from '@gatehouse/testkit';
import { kafkaHubEnv, startKafkaHub } from './kafka-hub.ts';

const run = uniqueName('history-slots');
const jwtSecret = 'history-slots-jwt-secret-long-enough';
const env = kafkaHubEnv(run, jwtSecret, { HISTORY_BROKER_READS: '2' });
const jwt = signJwt(withExpiry({ jti: `${run}-session` }), { alg: 'HS256', key: jwtSecret });

describe('history: broker reads at once per replica (Kafka)', () => {
  let kafka: KafkaBus;
  let hub: ServiceProcess;

  before(async () => {
    ({ kafka, hub } = await startKafkaHub(run, env));
  });
  after(async () => {
    await hub?.stop();
    await kafka?.close();
  });

  const query = () =>
    fetch(`${hub.publicUrl}/_gw/v1/history?eventType=${run}.chat`, {
      headers: { authorization: `Bearer ${jwt}` },
    });

  it('answers 503 with Retry-After beyond HISTORY_BROKER_READS, then serves again', async () => {
    const answers = await Promise.all(Array.from({ length: 24 }, query));
    const statuses = answers.map((r) => r.status);
    for (const r of answers) {
      await r.arrayBuffer();
      assert.ok(r.status === 200 || r.status === 503, `status ${r.status}`);
      if (r.status === 503) assert.match(r.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);
    }
    // 24 queries at once each needing a Kafka read: two run, the rest are refused at once.
    assert.ok(statuses.includes(503), `no query was refused: ${statuses.join(',')}`);
    assert.ok(statuses.includes(200), `no query was served: ${statuses.join(',')}`);
    const again = await query();
    assert.equal(again.status, 200, await again.text());
    assert.equal((await fetch(`${hub.publicUrl}/_gw/health`)).status, 200, 'the process still serves');
  });

  it('closes a rewinding connection beyond HISTORY_BROKER_READS, then rewinds again', async () => {
    const query = new URLSearchParams({
      subscriptions: JSON.stringify([{ eventType: `${run}.chat` }]),
      rewind: '5',
    });
    const url = `${hub.publicUrl}/_gw/v1/connection/sse?${query}`;
    const headers = { authorization: `Bearer ${jwt}` };
    const connections = await Promise.all(Array.from({ length: 24 }, () => openSse(url, headers)));
    try {
      for (const c of connections) assert.equal(c.status, 200, c.errorBody);
      // Those beyond the bound are closed: their clients come back instead of waiting.
      let ended = 0;
      for (const c of connections) void c.ended.then(() => ended++);
      await waitFor(() => ended > 0, { what: 'a rewinding connection beyond the bound closed' });
    } finally {
      for (const c of connections) c.close();
    }
    const again = await openSse(url, headers);
    try {
      assert.equal(again.status, 200, again.errorBody);
      await waitFor(() => again.events('gw.subscriptions_set').length === 1, {
        what: 'a rewind served again',
      });
    } finally {
      again.close();
    }
    assert.equal((await fetch(`${hub.publicUrl}/_gw/health`)).status, 200, 'the process still serves');
  });
});
