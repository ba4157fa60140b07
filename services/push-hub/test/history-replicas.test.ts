/**
 * History, rewind, since and latest value across two push-hub processes and a publisher on real
 * Kafka (the fan-out stream) and Redis (control bus and store), each hub buffering only 8 events so
 * that what is older comes from Kafka: history pages walked on either replica hold every event of a
 * place once, newest first; a rewind on every transport, on either replica, joins the live stream
 * with no gap and no duplicate while events are published before, during and after it; a `since`
 * taken from one replica's events starts right after it on the other; a latest value published
 * before the publisher restarted is given, with the newer ones, to a connect on either replica.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signJwt, withExpiry } from '@gatehouse/auth';
import { KafkaBus } from '@gatehouse/bus/all';
import {
  dependencyAddress,
  gatewayEnv,
  type ServiceProcess,
  spawnService,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';
import { idsOf, openClient, type StartingClient, transports } from './starting-clients.ts';

const run = uniqueName('history-replicas');
const jwtSecret = 'history-replicas-jwt-secret-long-enough';
const env: Record<string, string> = {
  ...gatewayEnv({ run, jwtSecret }),
  KAFKA_SOURCE_TOPICS: '',
  NATS_SOURCE_TOPICS: '',
  EVENT_BUFFER_SIZE: '8',
  EVENT_BUFFER_WARMUP: 'false',
  LONGPOLL_TIMEOUT: '500ms',
  SHUTDOWN_DRAIN_TIMEOUT_MS: '1000',
  LATEST_EVENT_TYPES: `${run}.status`,
  EXTRACTORS: JSON.stringify({
    [`${run}.chat`]: { room: { stable_field_index: 0, event: { json_pointer: '/data/room' } } },
    [`${run}.status`]: { device: { stable_field_index: 0, event: { json_pointer: '/data/device' } } },
  }),
};
const chat = `${run}.chat`;
const status = `${run}.status`;
const jwt = signJwt(withExpiry({ jti: `${run}-session` }), { alg: 'HS256', key: jwtSecret });

describe('history, rewind and latest value across two replicas (Kafka, Redis)', () => {
  let kafka: KafkaBus;
  const hubs: ServiceProcess[] = [];
  let publisher: ServiceProcess;
  const clients: StartingClient[] = [];
  let n = 0;

  const spawnPublisher = () =>
    spawnService({ entry: 'services/publisher/src/main.ts', name: 'publisher', publicPort: true, env });

  before(async () => {
    kafka = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: run });
    await kafka.ensureTopic(env['FANOUT_TOPIC']!, 1);
    for (const name of ['hub-a', 'hub-b'])
      hubs.push(
        await spawnService({
          entry: 'services/push-hub/src/main.ts',
          name,
          publicPort: true,
          env: { ...env, REPLICA_ID: `${run}-${name}` },
        }),
      );
    publisher = await spawnPublisher();
  });
  after(async () => {
    for (const c of clients) c.close();
    await Promise.all([...hubs.map((h) => h.stop()), publisher?.stop()]);
    await kafka?.close();
  });

  /** Publishes through the publisher; answers the event's id. */
  async function post(type: string, data: Record<string, unknown>): Promise<string> {
    const id = `${run}-${n++}`;
    const res = await fetch(`${publisher.publicUrl}/_gw/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/cloudevents+json' },
      body: JSON.stringify({ specversion: '1.0', id, source: run, type, data }),
    });
    assert.equal(res.status, 202, await res.text());
    return id;
  }
  /** Events of `type` (in `room`), each followed by two of another type: the buffers hold few of them. */
  async function publish(type: string, count: number, ids: string[], room = 1): Promise<void> {
    for (let i = 0; i < count; i++) {
      ids.push(await post(type, { room }));
      await post(`${run}.noise`, {});
      await post(`${run}.noise`, {});
    }
  }
  /** Both replicas have read every event published so far. */
  async function settled(type: string, newest: string): Promise<void> {
    for (const hub of hubs) {
      const c = await openClient(hub.publicUrl!, 'sse', [{ eventType: type }], { rewind: '1' });
      await waitFor(() => idsOf(c, type).at(-1) === newest, { what: 'the newest event on each replica' });
      c.close();
    }
  }

  it('pages history on either replica, newest first, past the buffer, each event once', async () => {
    const room1: string[] = [];
    const room2: string[] = [];
    for (let i = 0; i < 6; i++) {
      await publish(chat, 1, room1, 1);
      await publish(chat, 1, room2, 2);
    }
    await settled(chat, room2.at(-1)!);
    for (const hub of hubs) {
      const seen: string[] = [];
      let next: string | undefined;
      do {
        const query = new URLSearchParams({ eventType: chat, where: '{"room":1}', limit: '4' });
        if (next) query.set('before', next);
        const res = await fetch(`${hub.publicUrl}/_gw/v1/history?${query}`, {
          headers: { authorization: `Bearer ${jwt}` },
        });
        assert.equal(res.status, 200, await res.clone().text());
        const page = (await res.json()) as { events: Array<{ event: { id: string } }>; next?: string };
        seen.push(...page.events.map((e) => e.event.id));
        next = page.next;
      } while (next !== undefined && seen.length < 100);
      assert.deepEqual(seen, [...room1].reverse());
    }
  });

  for (const [i, transport] of transports.entries()) {
    const hub = i % 2;
    it(`${transport} on replica ${'ab'[hub]}: rewind joins the live stream without gap or duplicate`, async () => {
      const type = `${run}.rw.${transport}`;
      const ids: string[] = [];
      await publish(type, 10, ids);
      await settled(type, ids.at(-1)!);
      // More than the buffer of 8 holds: the oldest come from Kafka, on every transport.
      const rewind = 9;
      const connecting = openClient(hubs[hub]!.publicUrl!, transport, [{ eventType: type }], {
        rewind: String(rewind),
      });
      const during = publish(type, 3, ids);
      const client = await connecting;
      clients.push(client);
      await during;
      await publish(type, 4, ids);
      await waitFor(() => idsOf(client, type).at(-1) === ids.at(-1), { what: `${transport}: the newest` });
      const got = idsOf(client, type);
      assert.equal(new Set(got).size, got.length, `each once: ${got}`);
      assert.deepEqual(got, ids.slice(ids.length - got.length), `no gap: ${got}`);
      assert.ok(got.length >= rewind + 4 && got.length <= rewind + 3 + 4, `${got.length} events`);
      client.close();
    });
  }

  it("starts on one replica right after a position the other replica's events carry", async () => {
    const type = `${run}.since`;
    const ids: string[] = [];
    await publish(type, 5, ids);
    await settled(type, ids.at(-1)!);
    // Where replica a's history says the third event is.
    const res = await fetch(`${hubs[0]!.publicUrl}/_gw/v1/history?eventType=${type}&limit=10`, {
      headers: { authorization: `Bearer ${jwt}` },
    });
    const page = (await res.json()) as { events: Array<{ position: string; event: { id: string } }> };
    const position = page.events.find((e) => e.event.id === ids[2])?.position;
    assert.ok(position, JSON.stringify(page));
    const onB = await openClient(hubs[1]!.publicUrl!, 'ws', [{ eventType: type }], { since: position });
    clients.push(onB);
    await publish(type, 2, ids);
    await waitFor(() => idsOf(onB, type).at(-1) === ids.at(-1));
    assert.deepEqual(idsOf(onB, type), ids.slice(3));
  });

  it('gives the latest values after a publisher restart, on either replica', async () => {
    const kitchenOld = await post(status, { device: 'kitchen', on: false });
    const kitchen = await post(status, { device: 'kitchen', on: true });
    await publisher.stop();
    publisher = await spawnPublisher();
    const hall = await post(status, { device: 'hall', on: true });
    await post(status, { device: 'garage', on: true });
    await settled(status, (await post(status, { device: 'attic', on: true }))!);
    for (const [i, transport] of transports.entries()) {
      const client = await openClient(
        hubs[i % 2]!.publicUrl!,
        transport,
        [{ eventType: status, oneOf: [{ device: 'kitchen' }, { device: 'hall' }] }],
        { latest: 'true' },
      );
      clients.push(client);
      await waitFor(() => idsOf(client, status).length === 2, { what: `${transport}: the latest values` });
      assert.deepEqual(idsOf(client, status), [kitchen, hall]);
      assert.ok(!idsOf(client, status).includes(kitchenOld));
    }
  });
});
