/**
 * The fan-out consumer's fetch settings reach the broker from the hub's environment: a push-hub
 * process on the real Kafka with FANOUT_FETCH_MIN_BYTES far above one event and
 * FANOUT_FETCH_MAX_WAIT of 3 s. Once an event has come, the consumer's next fetch is held by the
 * broker until it has that many bytes or the wait is over, so the event published right after is
 * not sent at once (with fetches answered at the first byte it would be, within milliseconds), and
 * comes when the wait ends: late, not lost.
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
  sleep,
  spawnService,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';

const run = uniqueName('fanout-fetch');
const maxWaitMs = 3_000;
const env: Record<string, string> = {
  ...gatewayEnv({ run, jwtSecret: 'fanout-fetch-jwt-secret-long-enough' }),
  KAFKA_SOURCE_TOPICS: '',
  NATS_SOURCE_TOPICS: '',
  SHUTDOWN_DRAIN_TIMEOUT_MS: '1000',
  FANOUT_FETCH_MIN_BYTES: String(512 * 1024),
  FANOUT_FETCH_MAX_WAIT: `${maxWaitMs}ms`,
};
const topic = env['FANOUT_TOPIC']!;

describe('push hub: the fan-out consumer fetches as FANOUT_FETCH_MIN_BYTES and FANOUT_FETCH_MAX_WAIT say (Kafka)', () => {
  let kafka: KafkaBus;
  let hub: ServiceProcess;

  before(async () => {
    kafka = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: run });
    await kafka.ensureTopic(topic, 1);
    hub = await spawnService({ entry: 'services/push-hub/src/main.ts', name: 'hub', publicPort: true, env });
  });
  after(async () => {
    await hub?.stop();
    await kafka?.close();
  });

  const publish = (n: number) => {
    const event = {
      specversion: '1.0',
      id: `${run}-${n}`,
      source: 'fanout-fetch',
      type: 'fetched',
      data: { n },
    };
    return kafka.publish(topic, {
      value: JSON.stringify(event),
      headers: { ...publishedAtHeaders(), ...streamEventHeaders(event) },
    });
  };

  it('holds an event while the fetch waits for its bytes, then delivers it when the wait ends', async () => {
    const subscriptions = encodeURIComponent(JSON.stringify([{ eventType: 'fetched' }]));
    const sse = await openSse(`${hub.publicUrl}/_gw/v1/connection/sse?subscriptions=${subscriptions}`);
    assert.equal(sse.status, 200, sse.errorBody);
    const got = () => sse.events('fetched').length;
    await publish(1);
    // It comes when some fetch's wait ends; the consumer's next fetch starts then.
    await waitFor(() => got() === 1, { what: 'the first event', timeoutMs: 4 * maxWaitMs });
    await publish(2);
    await sleep(maxWaitMs / 2);
    assert.equal(got(), 1, 'the second event waits in the broker for the fetch to fill or time out');
    await waitFor(() => got() === 2, { what: 'the second event', timeoutMs: 4 * maxWaitMs });
    sse.close();
  });
});
