/**
 * Interest-based routing of the fan-out stream (FANOUT_ROUTING=interest) on a real NATS server, two
 * hub replicas, through the public SSE and long-poll surface: a replica reads only the types its
 * clients want (its /metrics count of records read shows it), a type it did not read comes from
 * the moment a client wants it with no gap, it stops coming once the last client of it left, and a
 * resume from a position where the replica did not read the client's type is served by a broker
 * replay: nothing missed, nothing twice. The project's NATS (tools/deps.sh) filters a consumer by
 * several subjects (2.10+): a replica whose clients want two or three types reads only those.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { NatsBus } from '@gatehouse/bus/all';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import { MemoryStore } from '@gatehouse/store';
import { dependencyAddress, LongPollClient, openSse, sleep, uniqueName, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from './hub-fixture.ts';

describe('interest-based routing of the fan-out stream (NATS)', () => {
  let bus: NatsBus;
  let topic: string;
  const hubs: HubFixture[] = [];
  let a: HubFixture;
  let b: HubFixture;

  before(async () => {
    bus = await NatsBus.connect({ servers: dependencyAddress.natsUrl, name: 'interest-routing-test' });
  });
  // Two fresh replicas on a stream of their own per test: the types read and the records counted
  // are this test's only.
  const startReplicas = async () => {
    topic = uniqueName('gw.interest');
    const shared = { bus: new MemoryBus(), store: new MemoryStore() };
    const env = { FANOUT_TOPIC: topic, FANOUT_ROUTING: 'interest', FANOUT_ROUTING_LINGER: '0ms' };
    a = await startHubFixture({ ...env, REPLICA_ID: 'a' }, shared, { fanoutBus: bus });
    b = await startHubFixture({ ...env, REPLICA_ID: 'b' }, shared, { fanoutBus: bus });
    hubs.push(a, b);
  };
  afterEach(async () => {
    for (const h of hubs.splice(0)) await h.stop();
  });
  after(async () => {
    // The streams (a few events each, unique names) age out with the bus's 24 h limit.
    await bus?.close();
  });

  /** As the publisher with FANOUT_ROUTING=interest: the type is the route. */
  const publish = (type: string, n: number) => {
    const event = { specversion: '1.0', id: crypto.randomUUID(), source: 'test', type, data: { n } };
    return bus.publish(
      topic,
      { value: JSON.stringify(event), headers: streamEventHeaders(event) },
      { route: type },
    );
  };
  const sseUrl = (h: HubFixture, type: string) =>
    `${h.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: type }])}`;
  const numbers = (events: Array<Record<string, unknown>>, type: string) =>
    events.filter((e) => e['type'] === type).map((e) => (e['data'] as { n: number }).n);
  /** Records this replica read from the stream: dispatched and skipped. */
  const recordsRead = async (h: HubFixture) =>
    (await h.metric('gw_fanout_events_total', 'outcome="dispatched"')) +
    (await h.metric('gw_fanout_events_total', 'outcome="skipped"'));

  it('reads only the wanted types; a new type comes from then on with no gap, and stops after its last client', async () => {
    await startReplicas();
    const [typeA, typeB] = [uniqueName('t.a'), uniqueName('t.b')];
    const first = await openSse(sseUrl(a, typeA));
    await waitFor(async () => (await a.metric('gw_fanout_routed_types')) === 1, { what: 'one type read' });
    for (let n = 1; n <= 3; n++) await publish(typeB, n);
    await publish(typeA, 1);
    await waitFor(() => numbers(first.events(), typeA).length === 1, { what: `${typeA} 1` });
    assert.equal(await recordsRead(a), 1, `the ${typeB} events were not read`);

    const second = await openSse(sseUrl(a, typeB));
    await waitFor(() => second.events('gw.subscriptions_set').length === 1, { what: 'the welcome' });
    for (let n = 4; n <= 6; n++) await publish(typeB, n);
    await waitFor(() => numbers(second.events(), typeB).length >= 3, { what: `${typeB} 4-6` });
    await sleep(200);
    assert.deepEqual(numbers(second.events(), typeB), [4, 5, 6], 'from its welcome on, none twice');
    assert.deepEqual(numbers(first.events(), typeA), [1]);

    second.close();
    await waitFor(async () => (await a.metric('gw_fanout_routed_types')) === 1, {
      what: `${typeB} no longer read`,
      timeoutMs: 15_000,
    });
    const before = await recordsRead(a);
    for (let n = 7; n <= 9; n++) await publish(typeB, n);
    await publish(typeA, 2);
    await waitFor(() => numbers(first.events(), typeA).length === 2, { what: `${typeA} 2` });
    assert.equal((await recordsRead(a)) - before, 1, `no ${typeB} event read once its client left`);
    first.close();
  });

  it('a replica whose clients want three types reads only those; a type added and one dropped while events flow lose and repeat nothing', async () => {
    await startReplicas();
    const [typeA, typeB, typeC, typeD, nobodys] = [
      uniqueName('t.a'),
      uniqueName('t.b'),
      uniqueName('t.c'),
      uniqueName('t.d'),
      uniqueName('t.e'),
    ];
    const routedTypes = () => a.metric('gw_fanout_routed_types');
    const both = await openSse(
      `${a.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: typeA }, { eventType: typeB }])}`,
    );
    const onC = await openSse(sseUrl(a, typeC));
    await waitFor(async () => (await routedTypes()) === 3, { what: 'three types read' });
    for (let n = 0; n < 10; n++) for (const type of [typeA, typeB, typeC, nobodys]) await publish(type, n);
    await waitFor(
      () => numbers(both.events(), typeB).length === 10 && numbers(onC.events(), typeC).length === 10,
      {
        what: 'the wanted events',
      },
    );
    assert.equal(await recordsRead(a), 30, `the ${nobodys} events were not read`);

    // Events of every type keep coming while a client wants typeD (added) and typeC's leaves (dropped).
    let onD: Awaited<ReturnType<typeof openSse>> | undefined;
    let publishedBeforeWelcome = 0;
    let n = 10;
    let last = Number.POSITIVE_INFINITY;
    const flowing = (async () => {
      for (; n < last && n < 2000; n++) {
        for (const type of [typeA, typeB, typeC, typeD, nobodys]) await publish(type, n);
        if (onD === undefined) publishedBeforeWelcome = n + 1;
      }
    })();
    await waitFor(() => n >= 30, { what: 'events flowing' });
    const d = await openSse(sseUrl(a, typeD));
    await waitFor(() => d.events('gw.subscriptions_set').length === 1, { what: 'the welcome' });
    onD = d;
    await waitFor(async () => (await routedTypes()) === 4, { what: `${typeD} read` });
    onC.close();
    await waitFor(async () => (await routedTypes()) === 3, {
      what: `${typeC} no longer read`,
      timeoutMs: 15_000,
    });
    last = n + 20;
    await flowing;
    const end = n;
    await waitFor(() => numbers(d.events(), typeD).at(-1) === end - 1, { what: `the last ${typeD}` });
    await waitFor(() => numbers(both.events(), typeB).at(-1) === end - 1, { what: `the last ${typeB}` });
    await sleep(100);
    const all = Array.from({ length: end }, (_, i) => i);
    assert.deepEqual(numbers(both.events(), typeA), all, `${typeA}, read throughout: no gap, none twice`);
    assert.deepEqual(numbers(both.events(), typeB), all, `${typeB}, read throughout: no gap, none twice`);
    const gotD = numbers(d.events(), typeD);
    assert.ok(
      gotD[0]! <= publishedBeforeWelcome,
      `${typeD} from its welcome (${publishedBeforeWelcome}) on, got from ${gotD[0]}`,
    );
    assert.deepEqual(gotD, all.slice(gotD[0]), `${typeD}: in order, no gap, none twice`);
    const gotC = numbers(onC.events(), typeC);
    assert.deepEqual(gotC, all.slice(0, gotC.length), `${typeC} until its client left: no gap, none twice`);

    // Dropped, typeC is no longer read, nor the type nobody wants.
    const before = await recordsRead(a);
    for (let k = 0; k < 5; k++) for (const type of [typeC, nobodys]) await publish(type, end + k);
    await publish(typeA, end);
    await waitFor(() => numbers(both.events(), typeA).at(-1) === end, { what: `${typeA} ${end}` });
    assert.equal((await recordsRead(a)) - before, 1, `neither ${typeC} nor ${nobodys} read`);
    assert.equal(await routedTypes(), 3);
    both.close();
    d.close();
  });

  it('a type new to a replica while its events flow: every one published after the welcome comes, none twice', async () => {
    await startReplicas();
    const [typeA, typeB] = [uniqueName('t.a'), uniqueName('t.b')];
    const first = await openSse(sseUrl(a, typeA));
    await waitFor(async () => (await a.metric('gw_fanout_routed_types')) === 1, { what: 'one type read' });
    // Events of both types keep coming, one after the other, while the second client connects.
    let welcomed = false;
    let publishedBeforeWelcome = 0;
    let n = 0;
    const flowing = (async () => {
      for (; n < 150; n++) {
        await publish(typeB, n);
        await publish(typeA, n);
        if (!welcomed) publishedBeforeWelcome = n + 1;
      }
    })();
    await waitFor(() => n >= 20, { what: 'events flowing' });
    const second = await openSse(sseUrl(a, typeB));
    await waitFor(() => second.events('gw.subscriptions_set').length === 1, { what: 'the welcome' });
    welcomed = true;
    await flowing;
    await waitFor(() => numbers(second.events(), typeB).at(-1) === 149, { what: 'the last event' });
    const got = numbers(second.events(), typeB);
    const firstGot = got[0]!;
    assert.ok(
      firstGot <= publishedBeforeWelcome,
      `every event published after the welcome (from ${publishedBeforeWelcome}), got from ${firstGot}`,
    );
    assert.deepEqual(
      got,
      Array.from({ length: 150 - firstGot }, (_, i) => firstGot + i),
      'in order, no gap, none twice',
    );
    await waitFor(() => numbers(first.events(), typeA).length >= 150, { what: `every ${typeA} event` });
    await sleep(100);
    assert.deepEqual(
      numbers(first.events(), typeA),
      Array.from({ length: 150 }, (_, i) => i),
      'the type read before goes on through the change: no gap, none twice',
    );
    first.close();
    second.close();
  });

  it('serves a resume from where the replica did not read the type by a broker replay, nothing missed or twice', async () => {
    await startReplicas();
    const [typeA, typeB] = [uniqueName('t.a'), uniqueName('t.b')];
    // Replica a reads typeA only; its ring holds typeA events on both sides of the typeB ones.
    const onA = await openSse(sseUrl(a, typeA));
    const onB = await openSse(sseUrl(b, typeB));
    await waitFor(async () => (await b.metric('gw_fanout_routed_types')) === 1, { what: 'b reads its type' });
    await publish(typeA, 1);
    await publish(typeB, 1);
    await waitFor(() => numbers(onB.events(), typeB).length === 1, { what: `${typeB} 1 on b` });
    const lastId = onB.frames.at(-1)!.id!;
    onB.close();
    for (let n = 2; n <= 3; n++) await publish(typeB, n);
    await publish(typeA, 2);
    await waitFor(() => numbers(onA.events(), typeA).length === 2, { what: `${typeA} 2 on a` });

    // The client comes back on replica a, which never read its type.
    const back = await openSse(sseUrl(a, typeB), { 'last-event-id': lastId });
    await waitFor(() => numbers(back.events(), typeB).length >= 2, { what: 'the missed events' });
    await publish(typeB, 4);
    await waitFor(() => numbers(back.events(), typeB).length >= 3, { what: 'a live event' });
    await sleep(200);
    assert.deepEqual(numbers(back.events(), typeB), [2, 3, 4]);
    assert.equal(back.events('gw.resync_required').length, 0);
    assert.ok((await a.metric('gw_resumes_total', 'source="broker"')) >= 1, 'served by a broker replay');
    back.close();
    onA.close();
  });

  it("serves a long poll's cursor from where the replica did not read its type, nothing missed", async () => {
    await startReplicas();
    const [typeA, typeB] = [uniqueName('t.a'), uniqueName('t.b')];
    const onA = await openSse(sseUrl(a, typeA));
    await waitFor(async () => (await a.metric('gw_fanout_routed_types')) >= 1, { what: 'a reads a type' });
    const poll = new LongPollClient(b.url);
    const opened = await poll.get(`?subscriptions=${subs([{ eventType: typeB }])}`);
    assert.equal(opened.status, 200);
    await publish(typeA, 1);
    await publish(typeB, 1);
    await waitFor(async () => numbers(await poll.poll(), typeB).includes(1), { what: `${typeB} 1 by b` });
    for (let n = 2; n <= 3; n++) await publish(typeB, n);
    await publish(typeA, 2);
    await waitFor(() => numbers(onA.events(), typeA).length === 2, { what: `${typeA} 2 on a` });
    // The same client polls replica a now (its cookies carry the cursor).
    const onReplicaA = new LongPollClient(a.url);
    onReplicaA.cookies = poll.cookies;
    const got: number[] = [];
    await waitFor(
      async () => {
        got.push(...numbers(await onReplicaA.poll(), typeB));
        return got.length >= 2;
      },
      { what: 'the events after the cursor', timeoutMs: 20_000 },
    );
    assert.deepEqual(got, [2, 3]);
    onA.close();
  });
});
