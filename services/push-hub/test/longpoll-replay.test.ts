/**
 * A long poll whose cursor fell out of the ring, on the real Kafka fan-out stream: the broker replay
 * serves it a page (LONGPOLL_MAX_RESPONSE_BYTES) of the events it wants, read past the others in
 * one broker subscription. Before, a page was cut by every event, wanted or not: after a page of
 * unwanted ones the poll slept until an event it wants woke it, so once the stream went quiet it
 * answered empty at the end of its window, a page further on, and the events after that page
 * waited for later polls (the cluster bench's S1 counted them lost: ~10 % of long-polling's owed
 * events); and each page cost a new broker subscription. SSE resuming from the same place through
 * the same replay gets the same events.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KafkaBus } from '@gatehouse/bus/all';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import {
  dependencyAddress,
  gatewayEnv,
  LongPollClient,
  sleep,
  openSse,
  type ServiceProcess,
  type SseConnection,
  spawnService,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';
import { type HubFixture, startHubFixture } from './hub-fixture.ts';

const run = uniqueName('longpoll-replay');
/** Far longer than the test: a poll that sleeps through its window fails it by its answer, not a clock. */
const window = '15s';
const env: Record<string, string> = {
  ...gatewayEnv({ run, jwtSecret: 'longpoll-replay-jwt-secret-long-enough' }),
  KAFKA_SOURCE_TOPICS: '',
  NATS_SOURCE_TOPICS: '',
  SHUTDOWN_DRAIN_TIMEOUT_MS: '1000',
  EVENT_BUFFER_SIZE: '20',
  LONGPOLL_TIMEOUT: window,
  LONGPOLL_MAX_RESPONSE_BYTES: String(16 * 1024),
};
const topic = env['FANOUT_TOPIC']!;
const filler = 'x'.repeat(1000);
const subscribe = (...types: string[]) =>
  encodeURIComponent(JSON.stringify(types.map((eventType) => ({ eventType }))));
const event = (type: string, n: number) => ({
  specversion: '1.0',
  id: `${run}-${n}`,
  source: 'longpoll-replay',
  type,
  data: { n, filler },
});
const numbersOf = (events: Array<Record<string, unknown>>, type = 'wanted') =>
  events.filter((e) => e['type'] === type).map((e) => (e['data'] as { n: number }).n);
const sseNumbers = (sse: SseConnection) =>
  sse.frames
    .filter((f) => f.event === 'wanted')
    .map((f) => (JSON.parse(f.data) as { data: { n: number } }).data.n);

describe('long-polling from a cursor older than the ring (Kafka replay)', () => {
  let kafka: KafkaBus;
  let hub: ServiceProcess;
  const opened: SseConnection[] = [];

  before(async () => {
    kafka = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: run });
    await kafka.ensureTopic(topic, 1);
    hub = await spawnService({ entry: 'services/push-hub/src/main.ts', name: 'hub', publicPort: true, env });
  });
  after(async () => {
    for (const sse of opened) sse.close();
    await hub?.stop();
    await kafka?.close();
  });

  const produce = (e: ReturnType<typeof event>) =>
    kafka.publish(topic, { value: JSON.stringify(e), headers: streamEventHeaders(e) });
  const readersOpened = async () => {
    const text = await (await fetch(`${hub.apiUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('gw_replay_readers_opened_total'));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };
  const sse = async (headers: Record<string, string> = {}) => {
    const s = await openSse(
      `${hub.publicUrl}/_gw/v1/connection/sse?subscriptions=${subscribe('wanted')}`,
      headers,
    );
    assert.equal(s.status, 200, s.errorBody);
    opened.push(s);
    return s;
  };

  it('reads on through pages of unwanted events to the one it wants, in its first answer', async () => {
    const watcher = await sse();
    const client = new LongPollClient(hub.publicUrl!);
    const query = `?subscriptions=${subscribe('wanted')}`;
    assert.equal((await client.get(query)).body, 'ok');
    await client.poll(); // the welcome events
    await produce(event('wanted', 1));
    assert.deepEqual(numbersOf(await client.poll()), [1]);
    const cursor = decodeURIComponent(client.cookies.get('last_event_id')!);

    // Twelve pages (16 KiB each) of events nobody wants, then one it wants; the ring keeps 20.
    for (let n = 2; n < 200; n++) await produce(event('unwanted', n));
    await produce(event('wanted', 200));
    // The hub has read them all: its cursor is far behind the ring now.
    await waitFor(() => sseNumbers(watcher).includes(200), {
      what: 'the hub reading the stream',
      timeoutMs: 30_000,
    });

    const readersBefore = await readersOpened();
    const answer = await client.get(query);
    assert.equal(answer.status, 200, answer.text);
    const body = answer.body as { last_event_id: string; events: Array<Record<string, unknown>> };
    assert.deepEqual(
      numbersOf(body.events),
      [200],
      `the event it is owed (answered at ${body.last_event_id})`,
    );
    assert.equal(await readersOpened(), readersBefore + 1, 'one broker subscription for the whole replay');

    // SSE resuming from the same place through the same replay: the same event, once.
    const resumed = await sse({ 'last-event-id': cursor });
    await waitFor(() => sseNumbers(resumed).length > 0, { what: 'the resumed SSE event', timeoutMs: 30_000 });
    assert.deepEqual(sseNumbers(resumed), [200]);
    assert.equal(resumed.events('gw.resync_required').length, 0);
  });
});

describe('a subscription change while a long poll waits for its broker replay', () => {
  let f: HubFixture;
  const sockets: Socket[] = [];
  before(async () => {
    f = await startHubFixture({
      EVENT_BUFFER_SIZE: '2',
      // One replay reader, held by a resuming SSE client that stops reading (2 s before it is detached).
      RESUME_REPLAY_READERS: '1',
      CONNECTION_HIGH_WATER_BYTES: String(16 * 1024),
      LONGPOLL_TIMEOUT: '6s',
    });
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await f.stop();
  });

  /** An SSE client resuming from `from` that stops reading once its subscription is confirmed. */
  function stalledResume(from: string): Promise<void> {
    const url = new URL(f.url);
    const socket = connect(Number(url.port), url.hostname);
    sockets.push(socket);
    socket.on('error', () => undefined);
    return new Promise((resolve) => {
      let received = '';
      socket.setEncoding('latin1');
      socket.on('data', function onData(chunk: string) {
        received += chunk;
        if (!received.includes('gw.subscriptions_set')) return;
        socket.off('data', onData);
        socket.pause();
        resolve();
      });
      socket.write(
        `GET /_gw/v1/connection/sse?subscriptions=${subscribe('filler')} HTTP/1.1\r\nHost: ${url.host}\r\nLast-Event-ID: ${from}\r\n\r\n`,
      );
    });
  }

  it('reads the replayed page again with the new subscriptions: an event published after the change reaches it', async () => {
    const client = new LongPollClient(f.url);
    const query = `?subscriptions=${subscribe('a')}`;
    assert.equal((await client.get(query)).body, 'ok');
    await client.poll(); // the welcome events
    await f.publish('a', { n: 1 });
    assert.deepEqual(numbersOf(await client.poll(), 'a'), [1]);
    const from = decodeURIComponent(client.cookies.get('last_event_id')!);
    // Far more than a socket holds: the SSE client's replay stops on it, holding the one reader.
    const big = 'x'.repeat(100 * 1024);
    for (let n = 2; n < 120; n++) await f.publish('filler', { n, big });
    await stalledResume(from);
    await waitFor(() => f.hub.replay!.readers === 1, { what: 'the replay reader held' });

    // The poll's replay waits for the reader with its subscriptions of then ('a').
    const answer = client.get(query);
    // Time for the poll to ask for its replay (were it later, it would read the new subscriptions
    // first, and the test would pass without proving anything: it cannot fail wrongly).
    await sleep(200);
    await putSubscriptions(f.url, client.cookies.get('connection_token')!, ['b']);
    await f.publish('b', { n: 200 });

    const got: Array<Record<string, unknown>> = [];
    got.push(...((await answer).body as { events: Array<Record<string, unknown>> }).events);
    for (let i = 0; i < 3 && numbersOf(got, 'b').length === 0; i++) got.push(...(await client.poll()));
    assert.deepEqual(numbersOf(got, 'b'), [200], 'the event of the new subscription, published after it');
  });
});

async function putSubscriptions(url: string, token: string, types: string[]): Promise<void> {
  const res = await fetch(`${url}/_gw/v1/connection/longpolling/${token}/subscriptions`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ subscriptions: types.map((eventType) => ({ eventType })) }),
  });
  assert.equal(res.status, 204, await res.text());
}
