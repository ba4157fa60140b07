/**
 * A client that comes back from a replica reading the stream ahead of this one carries a position
 * this replica has not read yet. Seen in a rolling restart through nginx on a loaded box: the
 * replica taking the moved clients was 0.1–0.9 s behind the one draining, so their positions were
 * not in its ring yet, they counted as new connections and the new-connection budget ran out (429).
 * Such a position, of the stream's epoch and past this replica's newest event, waits a moment for
 * the replica to read that far; it is a reconnect once the ring holds it, new otherwise.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openSse, sleep } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from '../hub-fixture.ts';

const wanted = subs([{ eventType: 'greeting' }]);

/** The memory bus's position `n` places after `position` (`<seq>.<epoch>`). */
function after(position: string, n: number): string {
  const [seq, epoch] = position.split('.');
  return `${Number(seq) + n}.${epoch}`;
}

/**
 * A hub whose new-connection budget (1 a minute) the first connection spent, with one event
 * published: `test` gets it, the SSE connect URL and that event's position.
 */
async function withNewBudgetSpent(
  env: Record<string, string>,
  test: (f: HubFixture, sse: string, last: string) => Promise<void>,
): Promise<void> {
  const f = await startHubFixture({
    MAX_CONNECTIONS_PER_MINUTE: '1',
    MAX_RECONNECTS_PER_MINUTE: '100',
    ...env,
  });
  try {
    const sse = `${f.url}/_gw/v1/connection/sse?subscriptions=${wanted}`;
    const last = await f.publish('greeting', { n: 1 });
    const first = await openSse(sse);
    assert.equal(first.status, 200);
    await test(f, sse, last);
    first.close();
  } finally {
    await f.stop();
  }
}

describe('reconnect evidence ahead of this replica', () => {
  it('counts a position the replica reads a moment later as a reconnect', () =>
    withNewBudgetSpent({}, async (f, sse, last) => {
      assert.equal((await openSse(sse)).status, 429, 'the new-connection budget is spent');
      // The event another replica has sent already: on the stream, not read here yet.
      const sentElsewhere = after(last, 1);
      const resuming = openSse(sse, { 'last-event-id': sentElsewhere });
      await sleep(300);
      assert.equal(await f.publish('greeting', { n: 2 }), sentElsewhere);
      const back = await resuming;
      assert.equal(back.status, 200, `admitted as a reconnect: ${back.errorBody}`);
      assert.equal(await f.metric('gw_connects_admitted_total', 'kind="reconnect"'), 1);
      back.close();
    }));

  it('counts a position the stream does not reach as new, after the wait', () =>
    withNewBudgetSpent({}, async (f, sse, last) => {
      const madeUp = await openSse(sse, { 'last-event-id': after(last, 1000) });
      assert.equal(madeUp.status, 429, 'a position past the newest that never comes is new');
      assert.equal(await f.metric('gw_connects_admitted_total', 'kind="reconnect"'), 0);
    }));

  it('counts a made-up position as new at once past RESUME_AHEAD_MAX_WAITING connects waiting', () =>
    withNewBudgetSpent({ RESUME_AHEAD_MAX_WAITING: '1' }, async (_f, sse, last) => {
      let waited = false;
      const waiting = openSse(sse, { 'last-event-id': after(last, 1000) }).then((c) => {
        waited = true;
        return c;
      });
      await sleep(300);
      const over = await openSse(sse, { 'last-event-id': after(last, 2000) });
      assert.equal(over.status, 429, 'no place to wait: new, and the budget is spent');
      assert.equal(waited, false, 'answered while the first still waits');
      assert.equal((await waiting).status, 429);
    }));
});
