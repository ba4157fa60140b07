import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BlacklistCheck, blacklistKey } from '@gatehouse/auth';
import { MemoryStore, type Store } from '@gatehouse/store';
import { RedisStore } from '@gatehouse/store/redis';
import { dependencyAddress, sleep, uniqueName } from '@gatehouse/testkit';
import { SessionBlacklist } from '../src/index.ts';

interface StoreKind {
  name: string;
  /** Two stores on one backend, as two replicas have. */
  open(): Promise<[Store, Store]>;
}

const kinds: StoreKind[] = [
  {
    name: 'memory store',
    async open() {
      const store = new MemoryStore();
      return [store, store];
    },
  },
  {
    name: 'redis store',
    async open() {
      const namespace = `${uniqueName('gw-blacklist-test')}:`;
      const url = dependencyAddress.redisUrl;
      return [await RedisStore.connect({ url, namespace }), await RedisStore.connect({ url, namespace })];
    },
  },
];

for (const kind of kinds) {
  describe(`session blacklist on the ${kind.name}`, () => {
    let store: Store;
    let other: Store;
    let blacklist: SessionBlacklist;
    before(async () => {
      [store, other] = await kind.open();
      blacklist = new SessionBlacklist(store);
    });
    after(async () => {
      for (const key of await store.keys('')) await store.delete(key);
      await store.close();
      if (other !== store) await other.close();
    });

    it('writes blacklist:<id> with exactly the requested lifetime', async () => {
      const before = Date.now();
      const { entry, outcome } = await blacklist.add('exact', 30);
      assert.equal(outcome, 'added');
      const ttl = (await store.ttl(blacklistKey('exact')))!;
      assert.ok(ttl <= 30 && ttl > 29.9, `ttl ${ttl}`);
      assert.ok(entry.expiresAt! >= before + 30_000 && entry.expiresAt! <= Date.now() + 30_000);
      assert.equal(blacklist.remainingSeconds(entry), 30);
    });

    it('ends the entry when its validity runs out, not before', async () => {
      // Two seconds, read at one: a loaded machine may delay a step by a few hundred ms.
      await blacklist.add('short', 2);
      await sleep(1000);
      assert.ok(await blacklist.lookup('short'), 'still blacklisted before the time is up');
      await sleep(1150);
      assert.equal(await blacklist.lookup('short'), undefined);
      assert.equal(await store.exists(blacklistKey('short')), false);
    });

    it('extends an entry and never shortens it', async () => {
      await blacklist.add('again', 10);
      const extended = await blacklist.add('again', 100);
      assert.equal(extended.outcome, 'extended');
      assert.ok((await store.ttl(blacklistKey('again')))! > 99.9);
      const kept = await blacklist.add('again', 5);
      assert.equal(kept.outcome, 'kept');
      const ttl = (await store.ttl(blacklistKey('again')))!;
      assert.ok(ttl > 99.8 && ttl <= 100, `ttl ${ttl}`);
      assert.equal(blacklist.remainingSeconds(kept.entry), 100);
    });

    it('announces every addition, a kept one too, so hubs kill each time', async () => {
      const heard: string[] = [];
      const unwatch = await other.watch(blacklistKey(''), (c) => heard.push(`${c.kind} ${c.key}`));
      try {
        await blacklist.add('announced', 50);
        await blacklist.add('announced', 5);
        const deadline = Date.now() + 2000;
        while (heard.length < 2 && Date.now() < deadline) await sleep(10);
        assert.deepEqual(heard, ['set blacklist:announced', 'set blacklist:announced']);
      } finally {
        await unwatch();
      }
    });

    it('keeps the longest validity when replicas blacklist one session at once', async () => {
      const replicas = [new SessionBlacklist(store), new SessionBlacklist(other)];
      const validities = Array.from({ length: 30 }, (_, i) => 30 + i).sort(() => Math.random() - 0.5);
      const started = Date.now();
      const results = await Promise.all(validities.map((v, i) => replicas[i % 2]!.add('race', v)));
      const ttl = (await store.ttl(blacklistKey('race')))!;
      // The runner-up is 58 s: anything above it, less the time the race took, is the longest.
      const elapsed = (Date.now() - started) / 1000;
      assert.ok(ttl > 59 - elapsed - 0.1 && ttl > 58 && ttl <= 59, `ttl ${ttl}: the longest (59 s) must win`);
      assert.equal(results.filter((r) => r.outcome === 'added').length, 1);
      assert.deepEqual(await store.keys('blacklist-lock:'), [], 'every lock is released');
    });

    it('is what the auth blacklist check sees', async () => {
      const check = new BlacklistCheck(other);
      await check.start();
      try {
        assert.equal(await check.isBlacklisted('checked'), false);
        await blacklist.add('checked', 60);
        assert.equal(await check.isBlacklisted('checked'), true);
      } finally {
        await check.close();
      }
    });

    it('looks entries up and counts them', async () => {
      assert.equal(await blacklist.lookup('nobody'), undefined);
      const found = await blacklist.lookup('exact');
      assert.equal(found?.sessionId, 'exact');
      const keys = await store.keys('blacklist:');
      assert.equal(await blacklist.count(), keys.length);
      await blacklist.add(`counted-${keys.length}`, 60);
      assert.equal(await blacklist.count(), keys.length + 1);
    });

    it('shows an entry without expiry, written by hand, as never expiring and keeps it so', async () => {
      await store.set(blacklistKey('forever'), 'by hand');
      const entry = (await blacklist.lookup('forever'))!;
      assert.equal(entry.expiresAt, undefined);
      assert.equal(blacklist.remainingSeconds(entry), null);
      assert.equal((await blacklist.add('forever', 5)).outcome, 'kept');
      assert.equal(await store.ttl(blacklistKey('forever')), Infinity);
    });
  });
}
