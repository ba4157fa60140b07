/**
 * POST /_gw/v1/ack on a hub whose fan-out stream is real Kafka, whose positions carry the topic's
 * epoch (`0-42.6b42ad8b`): a position of another epoch, or without one, is a 409 (it shares no
 * history with the stream), as is one past the stream's head; one of the current epoch is kept.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { KafkaBus } from '@gatehouse/bus/all';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import { MemoryStore } from '@gatehouse/store';
import { dependencyAddress, openSse, uniqueName, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from '../hub-fixture.ts';

describe('POST /_gw/v1/ack on Kafka positions (epochs)', () => {
  const topic = uniqueName('gw.ack-epoch');
  const store = new MemoryStore();
  let kafka: KafkaBus;
  let f: HubFixture;

  before(async () => {
    kafka = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: topic });
    await kafka.ensureTopic(topic, 1);
    f = await startHubFixture(
      { FANOUT_TOPIC: topic, EVENT_BUFFER_WARMUP: 'false' },
      { bus: new MemoryBus(), store },
      { fanoutBus: kafka },
    );
  });
  after(async () => {
    await f?.stop();
    await kafka?.close();
    await store.close();
  });

  it('refuses a position of another epoch, without one, or past the head with 409; keeps one of the current epoch', async () => {
    const jwt = f.jwt({ sub: 'epochs' });
    const sse = await openSse(
      `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'greeting', oneOf: [] }])}`,
    );
    for (let n = 0; n < 3; n++) {
      const event = {
        specversion: '1.0',
        id: crypto.randomUUID(),
        source: 'test',
        type: 'greeting',
        data: { n },
      };
      await kafka.publish(topic, { value: JSON.stringify(event), headers: streamEventHeaders(event) });
    }
    await waitFor(() => sse.events('greeting').length === 3, { what: 'the events', timeoutMs: 30_000 });
    const last = sse.frames.filter((fr) => fr.event === 'greeting').at(-1)!.id!;
    const m = /^(\d+)-(\d+)\.([0-9a-f]{8})$/.exec(last);
    assert.ok(m, `a position with an epoch: ${last}`);
    const [, partition, offset, epoch] = m;
    const otherEpoch = epoch === '00000000' ? '11111111' : '00000000';
    const ack = (position: string) =>
      fetch(`${f.url}/_gw/v1/ack`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
        body: JSON.stringify({ session: 'inbox', position }),
      });
    assert.equal((await ack(last)).status, 204);
    for (const [position, text] of [
      [`${partition}-${offset}.${otherEpoch}`, /another epoch/],
      [`${partition}-0`, /another epoch/],
      [`${partition}-${Number(offset) + 1000}.${epoch}`, /ahead/],
    ] as const) {
      const res = await ack(position);
      assert.equal(res.status, 409, position);
      assert.match(await res.text(), text, position);
    }
    const keys = await store.keys('gw:ack:');
    assert.equal(await store.get(keys.find((k) => k.endsWith(':inbox'))!), last, 'the stored one is kept');
    sse.close();
  });
});
