/**
 * Interest routing (FANOUT_ROUTING=interest) on a real NATS server with a type pattern: a route is
 * one subject token per type, so no filter subject selects a pattern's types; a replica holding a
 * pattern subscriber reads every type (gw_fanout_routed_types -1) and delivers every type the
 * pattern matches, types it never saw before included, and goes back to reading only named types
 * once the pattern's last client left. A replica beside it without patterns keeps its filter.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { NatsBus } from '@gatehouse/bus/all';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import { MemoryStore } from '@gatehouse/store';
import { dependencyAddress, openSse, uniqueName, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from './hub-fixture.ts';

describe('interest routing with a type pattern (NATS)', () => {
  let bus: NatsBus;
  const hubs: HubFixture[] = [];
  before(async () => {
    bus = await NatsBus.connect({ servers: dependencyAddress.natsUrl, name: 'interest-patterns-test' });
  });
  afterEach(async () => {
    for (const h of hubs.splice(0)) await h.stop();
  });
  after(async () => {
    await bus?.close();
  });

  it('reads every type while a pattern is wanted, delivers the types it matches, then filters again', async () => {
    const topic = uniqueName('gw.interest-patterns');
    const shared = { bus: new MemoryBus(), store: new MemoryStore() };
    const env = { FANOUT_TOPIC: topic, FANOUT_ROUTING: 'interest', FANOUT_ROUTING_LINGER: '0ms' };
    const a = await startHubFixture({ ...env, REPLICA_ID: 'a' }, shared, { fanoutBus: bus });
    hubs.push(a);
    const b = await startHubFixture({ ...env, REPLICA_ID: 'b' }, shared, { fanoutBus: bus });
    hubs.push(b);
    const p = uniqueName('orders').replaceAll('.', '-');
    const publish = (type: string) => {
      const event = { specversion: '1.0', id: crypto.randomUUID(), source: 'test', type, data: {} };
      return bus.publish(
        topic,
        { value: JSON.stringify(event), headers: streamEventHeaders(event) },
        { route: type },
      );
    };
    const sse = (h: HubFixture, list: Array<{ eventType: string }>) =>
      openSse(`${h.url}/_gw/v1/connection/sse?subscriptions=${subs(list)}`);
    const named = await sse(a, [{ eventType: `${p}.marker` }]);
    const onB = await sse(b, [{ eventType: `${p}.marker` }]);
    await waitFor(async () => (await a.metric('gw_fanout_routed_types')) === 1, {
      what: 'a filters by one type',
    });
    const byPattern = await sse(a, [{ eventType: `${p}.eu.*` }, { eventType: `${p}.marker` }]);
    await waitFor(() => byPattern.events('gw.subscriptions_set').length === 1, { what: 'the welcome' });
    await waitFor(async () => (await a.metric('gw_fanout_routed_types')) === -1, {
      what: 'a reads every type',
    });
    assert.equal(await b.metric('gw_fanout_routed_types'), 1, 'b, without patterns, keeps its filter');

    for (const type of [`${p}.eu.created`, `${p}.us.created`, `${p}.eu.shipped`, `${p}.eu.x.y`])
      await publish(type);
    await publish(`${p}.marker`);
    await waitFor(() => byPattern.events(`${p}.marker`).length === 1, { what: 'the marker' });
    const types = byPattern
      .events()
      .map((e) => e['type'])
      .filter((t) => !String(t).startsWith('gw.'));
    assert.deepEqual(types, [`${p}.eu.created`, `${p}.eu.shipped`, `${p}.marker`]);
    await waitFor(() => onB.events(`${p}.marker`).length === 1, { what: "b's marker" });

    byPattern.close();
    await waitFor(async () => (await a.metric('gw_fanout_routed_types')) === 1, {
      what: 'a filters again once the pattern left',
      timeoutMs: 15_000,
    });
    named.close();
    onB.close();
  });
});
