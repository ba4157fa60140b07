/**
 * A push-hub process and a publisher on the real Kafka fan-out bus: the hub routes each record by the
 * type, source and id the publisher puts in its headers, so an event no connection here wants is
 * kept unread, and nothing a client gets changes: events of a subscribed type are delivered; a
 * client resuming from a position through unwanted events (a duplicate among them) gets exactly
 * the ones it is owed; a record without the type header (an older publisher) is still delivered
 * and resumed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { publishedAtHeaders } from '@gatehouse/bus';
import { KafkaBus } from '@gatehouse/bus/all';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import {
  dependencyAddress,
  gatewayEnv,
  openSse,
  type ServiceProcess,
  type SseConnection,
  sleep,
  spawnService,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';

const run = uniqueName('header-routing');
const env: Record<string, string> = {
  ...gatewayEnv({ run, jwtSecret: 'header-routing-jwt-secret-long-enough' }),
  KAFKA_SOURCE_TOPICS: '',
  NATS_SOURCE_TOPICS: '',
  SHUTDOWN_DRAIN_TIMEOUT_MS: '1000',
};
const topic = env['FANOUT_TOPIC']!;
const subscribe = (...types: string[]) =>
  encodeURIComponent(JSON.stringify(types.map((eventType) => ({ eventType }))));
const event = (type: string, n: number, id = `${run}-${n}`) => ({
  specversion: '1.0',
  id,
  source: 'header-routing',
  type,
  data: { n },
});
/** The `n` of every event of the given types a client got, in order. */
const numbers = (sse: SseConnection, ...types: string[]) =>
  sse.frames
    .filter((f) => types.includes(f.event ?? ''))
    .map((f) => (JSON.parse(f.data) as { data: { n: number } }).data.n);

describe('push hub: routing fan-out records by their headers (Kafka)', () => {
  let kafka: KafkaBus;
  let hub: ServiceProcess;
  let publisher: ServiceProcess;

  before(async () => {
    kafka = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: run });
    // One partition, as a replayable stream has (kafka-bus.ts).
    await kafka.ensureTopic(topic, 1);
    [hub, publisher] = await Promise.all([
      spawnService({ entry: 'services/push-hub/src/main.ts', name: 'hub', publicPort: true, env }),
      spawnService({ entry: 'services/publisher/src/main.ts', name: 'publisher', publicPort: true, env }),
    ]);
  });
  after(async () => {
    await Promise.all([hub?.stop(), publisher?.stop()]);
    await kafka?.close();
  });

  /** Through the publisher, which writes the headers. */
  const post = async (type: string, n: number) => {
    const res = await fetch(`${publisher.publicUrl}/_gw/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/cloudevents+json' },
      body: JSON.stringify(event(type, n)),
    });
    assert.equal(res.status, 202, await res.text());
  };
  /** Straight onto the stream, with the headers given. */
  const produce = (e: ReturnType<typeof event>, headers: Record<string, string>) =>
    kafka.publish(topic, { value: JSON.stringify(e), headers });
  const skipped = async () => {
    const text = await (await fetch(`${hub.apiUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => /^gw_fanout_events_total\{.*outcome="skipped"/.test(l));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };
  const open = async (url: string, headers: Record<string, string> = {}) => {
    const sse = await openSse(url, headers);
    assert.equal(sse.status, 200, sse.errorBody);
    await waitFor(() => sse.events('gw.subscriptions_set').length === 1, { what: 'the welcome' });
    return sse;
  };

  it('delivers the subscribed types, resumes through unwanted ones exactly, and reads records without the type header', async () => {
    const live = await open(`${hub.publicUrl}/_gw/v1/connection/sse?subscriptions=${subscribe('wanted')}`);
    // (a) Events of the subscribed type among others nobody here wants.
    for (let n = 0; n < 6; n++) await post(n % 2 === 0 ? 'wanted' : 'unwanted', n);
    await waitFor(() => numbers(live, 'wanted').length === 3, { what: 'the wanted events' });
    const resumeFrom = live.frames.at(-1)!.id!;
    const skippedBefore = await skipped();
    assert.ok(skippedBefore >= 3, `the unwanted events were skipped on their headers (${skippedBefore})`);

    // (b) Behind the live client: unwanted events (one twice, as a source message taken in twice),
    // and (c) records without the type header, of either type.
    await post('unwanted', 6);
    await post('wanted', 7);
    const again = event('unwanted', 6);
    await produce(again, { ...publishedAtHeaders(), ...streamEventHeaders(again) });
    const noType = streamEventHeaders(event('unwanted', 8));
    delete noType['ce_type'];
    await produce(event('unwanted', 8), noType);
    await produce(event('wanted', 9), {});
    await produce(event('unwanted', 10), { ...publishedAtHeaders() });
    await post('unwanted', 11);
    await post('wanted', 12);
    await waitFor(() => numbers(live, 'wanted').length === 6, { what: 'the later wanted events' });
    await sleep(300);
    assert.deepEqual(numbers(live, 'wanted'), [0, 2, 4, 7, 9, 12], 'with the one without headers');
    assert.deepEqual(numbers(live, 'unwanted'), []);
    assert.ok((await skipped()) >= skippedBefore + 2, 'the unwanted ones with headers were skipped');

    // A client that subscribes to both resumes from the live client's place.
    const resumed = await open(
      `${hub.publicUrl}/_gw/v1/connection/sse?subscriptions=${subscribe('wanted', 'unwanted')}`,
      { 'last-event-id': resumeFrom },
    );
    await waitFor(() => numbers(resumed, 'wanted', 'unwanted').length >= 8, { what: 'the missed events' });
    await sleep(300);
    assert.deepEqual(numbers(resumed, 'wanted', 'unwanted'), [5, 6, 7, 8, 9, 10, 11, 12]);
    assert.equal(resumed.events('gw.resync_required').length, 0);
    live.close();
    resumed.close();
  });
});
