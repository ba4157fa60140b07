import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LongPollWaiters } from '../../src/transports/longpoll-waiters.ts';

const poll = { id: 'c1', sessionId: 's1', subscriptions: [{ eventType: 'greeting', oneOf: [] }] };
const event = (type: string) => ({ position: '1', type, event: { type }, json: '{}' });

describe('long-poll waiters', () => {
  it('keeps a kill that comes between arming and waiting: the wait returns at once', async () => {
    const waiters = new LongPollWaiters(new Map());
    const armed = waiters.arm(poll);
    waiters.sessionKilled('s1'); // while the poll still reads the blacklist, its queue, the stream
    const started = performance.now();
    assert.equal(await armed.wait(10_000, new AbortController().signal), 'killed');
    // Far below the 10 s wait, with room for a loaded machine.
    assert.ok(performance.now() - started < 5000);
    assert.equal(waiters.size, 1, 'a poll stays registered until it answers');
    armed.disarm();
    assert.equal(waiters.size, 0);
  });

  it('keeps a matching stream event or a private event that comes before the wait', async () => {
    const waiters = new LongPollWaiters(new Map());
    const a = waiters.arm(poll);
    waiters.streamEvent(event('greeting'));
    assert.equal(await a.wait(10_000, new AbortController().signal), 'stream');
    const b = waiters.arm(poll);
    waiters.privateEvent('c1');
    assert.equal(await b.wait(10_000, new AbortController().signal), 'private');
  });

  it('sleeps through events it does not match, until its window ends', async () => {
    const waiters = new LongPollWaiters(new Map());
    const armed = waiters.arm(poll);
    waiters.streamEvent(event('other'));
    waiters.sessionKilled('someone-else');
    assert.equal(await armed.wait(50, new AbortController().signal), 'timeout');
  });

  it('hands out a kill before other kept wake-ups, and every kept one in turn', async () => {
    const waiters = new LongPollWaiters(new Map());
    const armed = waiters.arm(poll);
    const signal = new AbortController().signal;
    waiters.streamEvent(event('greeting'));
    waiters.privateEvent('c1');
    waiters.sessionKilled('s1');
    assert.deepEqual(
      [await armed.wait(1000, signal), await armed.wait(1000, signal), await armed.wait(1000, signal)],
      ['killed', 'private', 'stream'],
    );
    assert.equal(await armed.wait(20, signal), 'timeout');
  });

  it('follows a change of subscriptions', async () => {
    const waiters = new LongPollWaiters(new Map());
    const armed = waiters.arm(poll);
    armed.update({ ...poll, subscriptions: [{ eventType: 'other', oneOf: [] }] });
    waiters.streamEvent(event('greeting'));
    waiters.streamEvent(event('other'));
    assert.equal(await armed.wait(1000, new AbortController().signal), 'stream');
    assert.equal(
      await armed.wait(20, new AbortController().signal),
      'timeout',
      'greeting no longer wakes it',
    );
  });

  it('forgets a poll that disarms without waiting', () => {
    const waiters = new LongPollWaiters(new Map());
    waiters.arm(poll).disarm();
    assert.equal(waiters.size, 0);
  });
});
