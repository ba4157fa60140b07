/**
 * Event delivery across real processes and brokers: events posted to either publisher, or produced
 * to the Kafka and NATS source topics, reach matching subscribers on both hub replicas over SSE,
 * WebSocket, socket.io and long-polling (polled on the other replica); subscriptions change through
 * the other replica; SSE resumes with Last-Event-ID on the other replica.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KinesisBus } from '@gatehouse/bus/all';
import { connect as natsConnect } from '@nats-io/transport-node';
import { dependencyAddress, LongPollClient, openSse, openWs, sleep, waitFor } from '@gatehouse/testkit';
import { Kafka, logLevel } from 'kafkajs';
import { io } from 'socket.io-client';
import { type EventTopology, postEvent, startEventTopology } from '../src/event-topology.ts';

const subs = (list: unknown) => encodeURIComponent(JSON.stringify(list));
const deliveryTimeout = { timeoutMs: 15_000 };
const kafkaClient = () =>
  new Kafka({ brokers: dependencyAddress.kafkaBrokers, clientId: 'e2e', logLevel: logLevel.NOTHING });

describe('event delivery across replicas', () => {
  let t: EventTopology;
  before(async () => {
    t = await startEventTopology();
  });
  after(() => t?.stop());

  it('delivers an event posted to either publisher to SSE, WS, socket.io and long-polling on both hubs', async () => {
    const [hubA, hubB] = t.hubs as [
      NonNullable<EventTopology['hubs'][0]>,
      NonNullable<EventTopology['hubs'][0]>,
    ];
    const wanted = [{ eventType: 'greeting', oneOf: [{ name: 'alice' }] }];
    const sseA = await openSse(`${hubA.publicUrl}/_gw/v1/connection/sse?subscriptions=${subs(wanted)}`);
    const wsB = openWs(
      `${hubB.publicUrl!.replace('http', 'ws')}/_gw/v1/connection/ws?subscriptions=${subs(wanted)}`,
    );
    const sio = io(hubA.publicUrl!, {
      path: '/_gw/v1/socket.io/',
      auth: { subscriptions: wanted },
      transports: ['websocket'],
    });
    const sioEvents: Array<Record<string, unknown>> = [];
    sio.on('greeting', (e: Record<string, unknown>) => sioEvents.push(e));
    const lp = new LongPollClient(hubA.publicUrl!);
    await lp.get(`?subscriptions=${subs(wanted)}`);
    const lpOnB = new LongPollClient(hubB.publicUrl!);
    lpOnB.cookies = lp.cookies;
    assert.equal((await lpOnB.poll()).length, 2, 'welcome events polled on the other replica');
    await waitFor(() => sseA.frames.length >= 2 && wsB.events.length >= 2 && sio.connected);

    const lpWaiting = lpOnB.poll();
    for (const [i, publisher] of t.publishers.entries()) {
      const res = await postEvent(publisher, { type: 'greeting', data: { name: 'alice', from: i } });
      assert.equal(res.status, 202, await res.text());
      assert.equal((await postEvent(publisher, { type: 'greeting', data: { name: 'bob' } })).status, 202);
    }
    await waitFor(() => sseA.events('greeting').length === 2, deliveryTimeout);
    await waitFor(() => wsB.events.filter((e) => e['type'] === 'greeting').length === 2, deliveryTimeout);
    await waitFor(() => sioEvents.length === 2, deliveryTimeout);
    const polled = [...(await lpWaiting)];
    while (polled.length < 2) polled.push(...(await lpOnB.poll()));
    for (const got of [
      sseA.events('greeting'),
      wsB.events.filter((e) => e['type'] === 'greeting'),
      sioEvents,
      polled,
    ]) {
      assert.deepEqual(got.map((e) => (e['data'] as { from: number }).from).sort(), [0, 1]);
    }
    await sleep(300);
    assert.equal(sseA.events('greeting').length, 2, 'each connection gets each event once, bob filtered out');
    sseA.close();
    wsB.ws.close();
    sio.close();
  });

  it('forwards Kafka (binary CloudEvents) and NATS (wrapped non-CloudEvents) source messages; a malformed one is skipped', async () => {
    const hubB = t.hubs[1]!;
    const sse = await openSse(
      `${hubB.publicUrl}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'from.kafka' }, { eventType: t.natsSourceSubject }])}`,
    );
    await waitFor(() => sse.frames.length >= 2);
    const kafka = kafkaClient();
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: t.kafkaSourceTopic,
      messages: [
        { value: '{"specversion":"1.0","type":"from.kafka"}' },
        {
          value: JSON.stringify({ n: 1 }),
          headers: {
            ce_specversion: '1.0',
            ce_id: 'k-1',
            ce_type: 'from.kafka',
            ce_source: 'kafka-test',
            'content-type': 'application/json',
          },
        },
      ],
    });
    await producer.disconnect();
    const nc = await natsConnect({ servers: dependencyAddress.natsUrl });
    nc.publish(t.natsSourceSubject, JSON.stringify({ plain: 'payload' }));
    await nc.flush();
    await nc.close();

    await waitFor(
      () => sse.events('from.kafka').length === 1 && sse.events(t.natsSourceSubject).length === 1,
      {
        timeoutMs: 30_000,
      },
    );
    assert.deepEqual(sse.events('from.kafka')[0]!['data'], { n: 1 });
    assert.deepEqual(sse.events(t.natsSourceSubject)[0]!['data'], { plain: 'payload' });
    const metrics = await Promise.all(
      t.publishers.map(async (p) => (await fetch(`${p.apiUrl}/metrics`)).text()),
    );
    assert.ok(
      metrics.some((m) => /gw_consumed_events_failed_total\{[^}]*reason="malformed"[^}]*\} 1/.test(m)),
      'the malformed Kafka message was counted',
    );
    sse.close();
  });

  it('keeps an HTTP post from claiming the source and id of a Kafka message to come (400), which is then delivered', async () => {
    const topic = t.kafkaSourceTopic;
    const sse = await openSse(
      `${t.hubs[0]!.publicUrl}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: topic }])}`,
    );
    await waitFor(() => sse.frames.length >= 2);
    const kafka = kafkaClient();
    const admin = kafka.admin();
    const producer = kafka.producer();
    try {
      await admin.connect();
      await admin.createTopics({ topics: [{ topic }], waitForLeaders: true });
      const next = (await admin.fetchTopicOffsets(topic)).find((p) => p.partition === 0)!.high;
      // The id the publisher will give the next message of partition 0, posted first over HTTP.
      const claimed = {
        specversion: '1.0',
        id: `0-${next}`,
        source: `kafka/${topic}`,
        type: topic,
        data: { forged: true },
      };
      for (const publisher of t.publishers) {
        const res = await postEvent(publisher, claimed);
        const text = await res.text();
        assert.equal(res.status, 400, text);
        assert.match(text, /is reserved: sources under kafka\/, nats\/, kinesis\//);
      }
      await producer.connect();
      await producer.send({ topic, messages: [{ partition: 0, value: JSON.stringify({ real: true }) }] });
      await waitFor(() => sse.events(topic).length === 1, { timeoutMs: 30_000, what: 'the Kafka message' });
      const delivered = sse.events(topic)[0]!;
      assert.deepEqual(delivered['data'], { real: true });
      // Its position: partition-offset and the source topic's epoch.
      assert.match(String(delivered['id']), new RegExp(`^0-${next}\\.[0-9a-f]{8}$`));
      assert.equal(delivered['source'], `kafka/${topic}`);
    } finally {
      sse.close();
      await producer.disconnect();
      await admin.disconnect();
    }
  });

  it('forwards records of the Kinesis source stream, consumed once by the two publishers', async () => {
    const hubA = t.hubs[0]!;
    const sse = await openSse(
      `${hubA.publicUrl}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'from.kinesis' }])}`,
    );
    await waitFor(() => sse.frames.length >= 2);
    const kinesis = new KinesisBus({
      endpoint: dependencyAddress.kinesisEndpoint,
      region: 'eu-west-1',
      createStreams: true,
    });
    for (let n = 0; n < 3; n++) {
      await kinesis.publish(t.kinesisSourceStream, {
        key: `k${n}`,
        value: JSON.stringify({
          specversion: '1.0',
          id: `kin-${n}`,
          type: 'from.kinesis',
          source: 'kinesis-test',
          data: { n },
        }),
      });
    }
    await kinesis.close();
    await waitFor(() => sse.events('from.kinesis').length === 3, { timeoutMs: 30_000 });
    await sleep(1000);
    assert.deepEqual(
      sse
        .events('from.kinesis')
        .map((e) => (e['data'] as { n: number }).n)
        .sort(),
      [0, 1, 2],
      'each record once, though two publishers consume the stream',
    );
    sse.close();
  });

  it('changes the subscriptions of a connection through the other replica', async () => {
    const [hubA, hubB] = t.hubs;
    const sse = await openSse(`${hubA!.publicUrl}/_gw/v1/connection/sse`);
    await waitFor(() => sse.frames.length >= 2);
    const token = (sse.events('gw.connection.create')[0]!['data'] as { connection_token: string })
      .connection_token;
    const res = await fetch(`${hubB!.publicUrl}/_gw/v1/connection/sse/${token}/subscriptions`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.jwt({ username: 'zoe' })}` },
      body: JSON.stringify({ subscriptions: [{ eventType: 'news' }] }),
    });
    assert.equal(res.status, 204, await res.text());
    await waitFor(() => sse.events('gw.subscriptions_set').length === 2, deliveryTimeout);
    assert.deepEqual(sse.events('gw.subscriptions_set')[1]!['data'], [
      { eventType: 'greeting', oneOf: [{ name: 'zoe' }] },
      { eventType: 'news', oneOf: [] },
    ]);
    await postEvent(t.publishers[0]!, { type: 'news', data: { n: 1 } });
    await waitFor(() => sse.events('news').length === 1, deliveryTimeout);
    sse.close();
  });

  it('resumes an SSE stream on the other replica from Last-Event-ID', async () => {
    const [hubA, hubB] = t.hubs;
    const wanted = subs([{ eventType: 'ticker' }]);
    const first = await openSse(`${hubA!.publicUrl}/_gw/v1/connection/sse?subscriptions=${wanted}`);
    await waitFor(() => first.frames.length >= 2);
    await postEvent(t.publishers[0]!, { type: 'ticker', data: { n: 1 } });
    await waitFor(() => first.events('ticker').length === 1, deliveryTimeout);
    const lastId = first.frames.at(-1)!.id!;
    first.close();
    await postEvent(t.publishers[1]!, { type: 'ticker', data: { n: 2 } });
    await postEvent(t.publishers[0]!, { type: 'ticker', data: { n: 3 } });
    // Both replicas consume the whole fan-out stream: wait until B has seen n=3 too.
    const probe = await openSse(
      `${hubB!.publicUrl}/_gw/v1/connection/sse?lastEventId=${encodeURIComponent(lastId)}&subscriptions=${wanted}`,
    );
    await waitFor(() => probe.events('ticker').length === 2, deliveryTimeout);
    assert.deepEqual(
      probe.events('ticker').map((e) => e['data']),
      [{ n: 2 }, { n: 3 }],
    );
    probe.close();
  });
});

describe('connection rate limit across replicas', () => {
  it('counts connections on both hubs against one MAX_CONNECTIONS_PER_MINUTE', async () => {
    const t = await startEventTopology({ MAX_CONNECTIONS_PER_MINUTE: '4' });
    try {
      const statuses: number[] = [];
      const open = [];
      for (let i = 0; i < 6; i++) {
        const sse = await openSse(`${t.hubs[i % 2]!.publicUrl}/_gw/v1/connection/sse`);
        statuses.push(sse.status);
        open.push(sse);
      }
      assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
      for (const c of open) c.close();
    } finally {
      await t.stop();
    }
  });
});
