/**
 * The connections API when our own control bus cannot take a request: 503 with Retry-After, never a
 * partial answer (partial means silent replicas, not our outage) and never a hang. Two in-process
 * hubs on one memory bus and store, their control bus cut by the test.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  BusUnavailableError,
  MemoryBus,
  type OutgoingMessage,
  type Position,
  type PublishOptions,
} from '@gatehouse/bus';
import { MemoryStore } from '@gatehouse/store';
import { type HubFixture, startHubFixture } from '../hub-fixture.ts';

/** A memory bus whose publishes fail, as Redis down does, while `cut` is set. */
class CuttableBus extends MemoryBus {
  cut = false;
  override publish(topic: string, message: OutgoingMessage, options?: PublishOptions): Promise<Position> {
    if (this.cut) return Promise.reject(new BusUnavailableError('the control bus is cut'));
    return super.publish(topic, message, options);
  }
}

describe('connections API: our control bus down', () => {
  const bus = new MemoryBus();
  const store = new MemoryStore();
  const controlBus = new CuttableBus();
  const hubs: HubFixture[] = [];

  before(async () => {
    // A 20 s reply time-out, far above an answer's time: a request that waits for the replies
    // instead of answering 503 at once is told apart on a loaded machine.
    for (const id of ['a', 'b'])
      hubs.push(
        await startHubFixture(
          { REPLICA_ID: `outage-${id}`, CONNECTIONS_API_TIMEOUT: '20s' },
          { bus, store, controlBus },
        ),
      );
  });
  after(async () => {
    for (const hub of hubs) await hub.stop();
    await controlBus.close();
    await bus.close();
    await store.close();
  });

  it('answers 503 with Retry-After for every operation, at once', async () => {
    const api = hubs[0]!.apiUrl;
    assert.equal((await fetch(`${api}/v3/connections`)).status, 200, 'answers while the bus is up');
    controlBus.cut = true;
    try {
      const requests: Array<[string, RequestInit]> = [
        ['/v3/connections', {}],
        ['/v3/connections/AAAAAAAAAAAAAAAA', {}],
        ['/v3/connections/AAAAAAAAAAAAAAAA', { method: 'DELETE' }],
        [
          '/v3/connections/disconnect',
          { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"user":"x"}' },
        ],
        [
          '/v3/connections/AAAAAAAAAAAAAAAA/subscriptions',
          { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"subscriptions":[]}' },
        ],
        [
          '/v3/connections/subscriptions',
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{"user":"x","subscriptions":[{"eventType":"news"}]}',
          },
        ],
        ['/v3/replicas', {}],
      ];
      for (const [path, init] of requests) {
        const started = Date.now();
        const res = await fetch(`${api}${path}`, init);
        assert.equal(res.status, 503, `${init.method ?? 'GET'} ${path}: ${await res.clone().text()}`);
        assert.equal(res.headers.get('retry-after'), '1');
        assert.ok(Date.now() - started < 5000, `${path} answered at once (${Date.now() - started} ms)`);
      }
    } finally {
      controlBus.cut = false;
    }
    assert.equal((await fetch(`${api}/v3/connections`)).status, 200, 'answers again once the bus is back');
  });
});
