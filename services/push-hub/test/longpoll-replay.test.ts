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
import { after, before, describe, it } from 'node:test';
import { KafkaBus } from '@gatehouse/bus/all';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import {
  dependencyAddress,
  gatewayEnv,
  LongPollClient,
  openSse,
  type ServiceProcess,
  type SseConnection,
  spawnService,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';

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
const numbersOf = (events: Array<Record<string, unknown>>) =>
  events.filter((e) => e['type'] === 'wanted').map((e) => (e['data'] as { n: number }).n);
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
