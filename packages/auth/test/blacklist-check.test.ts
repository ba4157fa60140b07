import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { type ChangeListener, MemoryStore, StoreError } from '@gatehouse/store';
import { waitFor } from '@gatehouse/testkit';
import { BlacklistCheck, type BlacklistCheckOptions, blacklistKey } from '../src/index.ts';
import { FakeClock } from './fixtures.ts';

/** Counts the lookups that reach the store, and can hold an answer back to stage a race. */
class CountingStore extends MemoryStore {
  ttlCalls = 0;
  hold: Promise<void> | undefined;
  down = false;

  /** While true, notifications are lost, as while a watch reconnects. */
  muted = false;
  private readonly watchers: Array<{ prefix: string; listener: ChangeListener }> = [];

  override watch(prefix: string, listener: ChangeListener) {
    this.watchers.push({ prefix, listener });
    return super.watch(prefix, (change) => {
      if (!this.muted) listener(change);
    });
  }

  /** The watch listens again after it was cut off. */
  resync(): void {
    for (const { prefix, listener } of this.watchers) listener({ key: prefix, kind: 'resync' });
  }

  override async ttl(key: string): Promise<number | undefined> {
    this.ttlCalls++;
    if (this.down) throw new StoreError('store unreachable');
    const answer = await super.ttl(key);
    await this.hold;
    return answer;
  }
}

describe('blacklist check', () => {
  let store: CountingStore;
  const checks: BlacklistCheck[] = [];

  async function check(options: BlacklistCheckOptions = {}): Promise<BlacklistCheck> {
    const created = new BlacklistCheck(store, options);
    await created.start();
    checks.push(created);
    return created;
  }

  /** What the blacklist service does. */
  const blacklist = (sessionId: string, ttlSeconds = 60) =>
    store.set(blacklistKey(sessionId), '1', { ttlSeconds });

  beforeEach(() => {
    store = new CountingStore();
  });
  afterEach(async () => {
    for (const c of checks.splice(0)) await c.close();
    await store.close();
  });

  it('uses the key blacklist:<sessionId>', () => {
    assert.equal(blacklistKey('abc'), 'blacklist:abc');
    assert.equal(blacklistKey('a:b/c'), 'blacklist:a:b/c');
  });

  it('answers from the store', async () => {
    const bl = await check();
    assert.equal(await bl.isBlacklisted('s1'), false);
    await blacklist('s1');
    assert.equal(await bl.isBlacklisted('s1'), true);
    assert.equal(await bl.isBlacklisted('s2'), false);
  });

  it('keeps a positive answer until the key would expire', async () => {
    const clock = new FakeClock();
    const bl = await check({ now: clock.now });
    await blacklist('s1', 60);
    assert.equal(await bl.isBlacklisted('s1'), true);
    const calls = store.ttlCalls;
    clock.advance(59_000);
    for (let i = 0; i < 10; i++) assert.equal(await bl.isBlacklisted('s1'), true);
    assert.equal(store.ttlCalls, calls, 'answered locally');
    clock.advance(1_000);
    assert.equal(await bl.isBlacklisted('s1'), true);
    assert.equal(store.ttlCalls, calls + 1, 'asked again once the TTL ran out');
  });

  it('keeps an entry without expiry', async () => {
    const bl = await check();
    await store.set(blacklistKey('forever'), '1');
    assert.equal(await bl.isBlacklisted('forever'), true);
    assert.equal(await bl.isBlacklisted('forever'), true);
    assert.equal(store.ttlCalls, 1);
  });

  it('sees a session expire from the blacklist', async () => {
    const bl = await check();
    await blacklist('short', 0.2);
    assert.equal(await bl.isBlacklisted('short'), true);
    await waitFor(async () => !(await bl.isBlacklisted('short')), { timeoutMs: 2_000, what: 'expiry' });
  });

  it('asks the store every time for a negative answer by default', async () => {
    const bl = await check();
    for (let i = 0; i < 5; i++) await bl.isBlacklisted('clean');
    assert.equal(store.ttlCalls, 5);
  });

  it('reuses a negative answer for negativeCacheMs when asked to', async () => {
    const clock = new FakeClock();
    const bl = await check({ now: clock.now, negativeCacheMs: 1_000 });
    for (let i = 0; i < 5; i++) assert.equal(await bl.isBlacklisted('clean'), false);
    assert.equal(store.ttlCalls, 1);
    clock.advance(1_000);
    await bl.isBlacklisted('clean');
    assert.equal(store.ttlCalls, 2);
  });

  it('sees a blacklisting by another replica at once, despite a cached negative answer', async () => {
    const replicaA = await check({ negativeCacheMs: 60_000 });
    const replicaB = await check({ negativeCacheMs: 60_000 });
    assert.equal(await replicaA.isBlacklisted('s1'), false);
    assert.equal(await replicaB.isBlacklisted('s1'), false);
    await blacklist('s1');
    assert.equal(await replicaA.isBlacklisted('s1'), true);
    assert.equal(await replicaB.isBlacklisted('s1'), true);
  });

  it('drops every cached answer when its watch was cut off, so a blacklisting it missed counts', async () => {
    const bl = await check({ negativeCacheMs: 60_000 });
    assert.equal(await bl.isBlacklisted('s1'), false);
    store.muted = true;
    await blacklist('s1');
    store.muted = false;
    assert.equal(await bl.isBlacklisted('s1'), false, 'the missed notification left the cached "no"');
    store.resync();
    assert.equal(await bl.isBlacklisted('s1'), true);
  });

  it('forgets a positive answer when the entry is deleted', async () => {
    const bl = await check();
    await blacklist('s1');
    assert.equal(await bl.isBlacklisted('s1'), true);
    await store.delete(blacklistKey('s1'));
    assert.equal(await bl.isBlacklisted('s1'), false);
  });

  /** Starts a check whose store lookup has answered but is held back until `release`. */
  async function heldCheck(bl: BlacklistCheck, sessionId: string) {
    let release!: () => void;
    store.hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const calls = store.ttlCalls;
    const answer = bl.isBlacklisted(sessionId);
    await waitFor(() => store.ttlCalls > calls, { what: 'the lookup to start' });
    return {
      answer,
      release: () => {
        store.hold = undefined;
        release();
      },
    };
  }

  it('does not cache a "no" that raced with a blacklisting', async () => {
    const bl = await check({ negativeCacheMs: 60_000 });
    const held = await heldCheck(bl, 's1');
    await blacklist('s1');
    held.release();
    assert.equal(await held.answer, false, 'the store answered before the blacklisting');
    assert.equal(await bl.isBlacklisted('s1'), true, 'that "no" was not cached');
  });

  it('does not let a check join a lookup that started before a blacklisting', async () => {
    const bl = await check();
    const held = await heldCheck(bl, 's1');
    await blacklist('s1');
    const during = bl.isBlacklisted('s1');
    held.release();
    assert.equal(await held.answer, false);
    assert.equal(await during, true);
  });

  it('shares one store lookup between concurrent checks of a session', async () => {
    const bl = await check();
    await blacklist('s1');
    const answers = await Promise.all(Array.from({ length: 20 }, () => bl.isBlacklisted('s1')));
    assert.ok(answers.every((a) => a));
    assert.equal(store.ttlCalls, 1);
  });

  it('rejects when the store cannot answer', async () => {
    const bl = await check();
    store.down = true;
    await assert.rejects(bl.isBlacklisted('s1'), StoreError);
    store.down = false;
    assert.equal(await bl.isBlacklisted('s1'), false, 'a failure is not cached');
  });

  it('stops listening on close', async () => {
    const clock = new FakeClock();
    const bl = new BlacklistCheck(store, { now: clock.now, negativeCacheMs: 60_000 });
    await bl.start();
    await bl.close();
    assert.equal(await bl.isBlacklisted('s1'), false);
    await blacklist('s1');
    assert.equal(await bl.isBlacklisted('s1'), false, 'no watch: the cached "no" stays until it expires');
    clock.advance(60_000);
    assert.equal(await bl.isBlacklisted('s1'), true);
  });
});
