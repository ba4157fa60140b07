/**
 * Acknowledgements with FANOUT_ROUTING=interest on a real NATS server, two hub replicas, through
 * their public ports: a replica whose clients want none of a type does not read it, so its ring's
 * head says nothing about where that type's events are. An ack of an event a client got from one
 * replica, sent (as a load balancer may) to the other, is taken; one past the stream's end is not.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { NatsBus } from '@gatehouse/bus/all';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import { MemoryStore } from '@gatehouse/store';
import { dependencyAddress, openSse, uniqueName, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from '../hub-fixture.ts';

describe('acknowledgements with interest routing (NATS)', () => {
  let bus: NatsBus;
  const topic = uniqueName('gw.ack-interest');
  const shared = { bus: new MemoryBus(), store: new MemoryStore() };
  let a: HubFixture;
  let b: HubFixture;

  before(async () => {
    bus = await NatsBus.connect({ servers: dependencyAddress.natsUrl, name: 'ack-interest-test' });
    const env = { FANOUT_TOPIC: topic, FANOUT_ROUTING: 'interest', FANOUT_ROUTING_LINGER: '0ms' };
    a = await startHubFixture({ ...env, REPLICA_ID: 'a' }, shared, { fanoutBus: bus });
    b = await startHubFixture({ ...env, REPLICA_ID: 'b' }, shared, { fanoutBus: bus });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await shared.bus.close();
    await shared.store.close();
    // The stream (a few events, a unique name) ages out with the bus's 24 h limit.
    await bus?.close();
  });

  const publish = (type: string, n: number) => {
    const event = { specversion: '1.0', id: crypto.randomUUID(), source: 'test', type, data: { n } };
    return bus.publish(
      topic,
      { value: JSON.stringify(event), headers: streamEventHeaders(event) },
      { route: type },
    );
  };
  const ack = (h: HubFixture, jwt: string, position: string) =>
    fetch(`${h.url}/_gw/v1/ack`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
      body: JSON.stringify({ session: 'inbox', position }),
    });

  it("takes an ack of an event through the replica that did not read its type, and refuses one past the stream's end", async () => {
    const type = uniqueName('t.orders');
    const jwt = a.jwt({ sub: 'interest-reader' });
    const sse = await openSse(
      `${a.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: type }])}&jwt=${jwt}&ackSession=inbox`,
    );
    await waitFor(async () => (await a.metric('gw_fanout_routed_types')) === 1, {
      what: 'the type read on a',
    });
    // b reads a type of its own, so that its ring has a head: behind the type a's client gets.
    const other = uniqueName('t.other');
    const onB = await openSse(`${b.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: other }])}`);
    await waitFor(async () => (await b.metric('gw_fanout_routed_types')) === 1, {
      what: 'the type read on b',
    });
    await publish(other, 0);
    await waitFor(() => onB.events(other).length === 1, { what: 'b has read one event' });
    const positions: string[] = [];
    for (let n = 1; n <= 3; n++) positions.push(await publish(type, n));
    await waitFor(() => sse.frames.filter((f) => f.event === type).length === 3, { what: 'the events on a' });
    const last = sse.frames.filter((f) => f.event === type).at(-1)!.id!;
    assert.equal(last, positions[2]);

    const res = await ack(b, jwt, last);
    assert.equal(res.status, 204, `an ack of an event sent: ${res.status} ${await res.text()}`);
    const ahead = await ack(
      b,
      jwt,
      last.replace(/^\d+/, (n) => String(Number(n) + 1000)),
    );
    assert.equal(ahead.status, 409, `an ack past the stream's end: ${await ahead.text()}`);
    sse.close();
    onB.close();
  });
});
