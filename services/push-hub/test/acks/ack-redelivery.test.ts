/**
 * Redelivery after ACK_TIMEOUT (1 s here), through a hub's public port: an ack-session connection
 * whose events are not acknowledged in time is ended with `gw.connection_closed`
 * `{"reason":"ack_timeout","reconnect":true}`, and its next connection (sending its last received
 * event as Last-Event-ID, as EventSource does) gets the unacknowledged events again; one whose
 * events were acknowledged is left alone; connections without a session are not looked at. A
 * long-poll connection, whose state is in the store, is ended at a poll after ACK_TIMEOUT and its
 * next poll (a new connection) gets the events again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { MemoryStore } from '@gatehouse/store';
import { LongPollClient, openSse, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from '../hub-fixture.ts';

const greetings = subs([{ eventType: 'greeting', oneOf: [] }]);
const numbers = (events: Array<Record<string, unknown>>) =>
  events.filter((e) => e['type'] === 'greeting').map((e) => (e['data'] as { n: number }).n);

describe('redelivery of what an ack session did not acknowledge within ACK_TIMEOUT', () => {
  const bus = new MemoryBus();
  const store = new MemoryStore();
  let a: HubFixture;
  let b: HubFixture;

  before(async () => {
    a = await startHubFixture(
      { REPLICA_ID: 'a', ACK_TIMEOUT: '1s', LONGPOLL_TIMEOUT: '300ms' },
      { bus, store },
    );
    b = await startHubFixture({ REPLICA_ID: 'b', ACK_TIMEOUT: '1s' }, { bus, store });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await bus.close();
    await store.close();
  });

  it('ends a connection that did not acknowledge, and the next one gets the events again; leaves an acknowledging one alone', async () => {
    const jwt = a.jwt({ sub: 'redelivery', iss: 'tests' });
    const url = (session: string) =>
      `${a.url}/_gw/v1/connection/sse?subscriptions=${greetings}&jwt=${jwt}&ackSession=${session}`;
    // Watched first, so its store read in the tick both are due in is answered first.
    const prompt = await openSse(url('prompt'));
    const slow = await openSse(url('slow'));
    const plain = await openSse(`${a.url}/_gw/v1/connection/sse?subscriptions=${greetings}&jwt=${jwt}`);
    assert.equal(await a.metric('gw_ack_sessions_connected'), 2);
    const positions: string[] = [];
    for (let n = 0; n < 3; n++) positions.push(await a.publish('greeting', { name: 'x', n }));
    await waitFor(() => numbers(prompt.events()).length === 3 && numbers(slow.events()).length === 3, {
      what: 'the events on both',
    });
    const acked = await fetch(`${b.url}/_gw/v1/ack`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
      body: JSON.stringify({ session: 'prompt', position: positions[2] }),
    });
    assert.equal(acked.status, 204);

    await slow.ended;
    const closed = slow.events('gw.connection_closed');
    assert.deepEqual(
      closed.map((e) => e['data']),
      [{ reason: 'ack_timeout', reconnect: true }],
    );
    assert.equal(await a.metric('gw_ack_redeliveries_total'), 1);

    // Back with its last received event as Last-Event-ID: the session starts where it began.
    const lastReceived = slow.frames.filter((f) => f.event === 'greeting').at(-1)!.id!;
    const again = await openSse(`${url('slow').replace(a.url, b.url)}`, { 'last-event-id': lastReceived });
    await waitFor(() => numbers(again.events()).length === 3, { what: 'the unacknowledged events again' });
    assert.deepEqual(numbers(again.events()), [0, 1, 2]);

    await a.publish('greeting', { name: 'x', n: 3 });
    await waitFor(() => numbers(prompt.events()).includes(3) && numbers(plain.events()).includes(3), {
      what: 'the next event on the connections left alone',
    });
    assert.equal(prompt.events('gw.connection_closed').length, 0, 'the acknowledging one is left alone');
    assert.equal(plain.events('gw.connection_closed').length, 0, 'one without a session is not looked at');
    for (const c of [prompt, plain, again]) c.close();
  });

  it('ends a long-poll connection that did not acknowledge at a poll, and its next poll gets the events again', async () => {
    const jwt = a.jwt({ sub: 'redelivery-lp', iss: 'tests' });
    const query = `?subscriptions=${greetings}&jwt=${jwt}&ackSession=lp`;
    const lp = new LongPollClient(a.url);
    assert.equal((await lp.get(query)).status, 200);
    for (let n = 0; n < 3; n++) await a.publish('greeting', { name: 'x', n });
    const received: Array<Record<string, unknown>> = [];
    let closed: Record<string, unknown> | undefined;
    // Polls (through either replica: the connection is in the store) until the hub ends it.
    for (let i = 0; i < 40 && !closed; i++) {
      const answer = await lp.get(query);
      assert.equal(answer.status, 200, answer.text);
      const events = (answer.body as { events: Array<Record<string, unknown>> }).events;
      received.push(...events);
      closed = events.find((e) => e['type'] === 'gw.connection_closed');
    }
    assert.deepEqual(numbers(received), [0, 1, 2]);
    assert.deepEqual(closed?.['data'], { reason: 'ack_timeout', reconnect: true });
    assert.equal((await lp.get(query)).status, 200, 'the next poll makes a new connection');
    const again = await lp.get(query);
    assert.deepEqual(numbers((again.body as { events: Array<Record<string, unknown>> }).events), [0, 1, 2]);
  });
});
