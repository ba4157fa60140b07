/**
 * The contract every Store adapter passes, run against the real server by each adapter's test file.
 * See src/store.ts for the semantics under test.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, sleep, uniqueName, waitFor } from '@gatehouse/testkit';
import { isUnavailable } from '@gatehouse/service-kit';
import { type Change, type Store, StoreUnavailableError } from '../src/index.ts';

export interface StoreContractTarget {
  name: string;
  /** A store on its own empty namespace. */
  createStore(): Promise<Store>;
  /**
   * Another handle on the same backend and namespace as `store`, as a second replica would open it
   * (the very same object where the backend lives inside one instance, like the memory store).
   */
  openPeer(store: Store): Promise<Store>;
  /** Stops and starts the real server; absent for the memory adapter. */
  restartServer?(): Promise<void>;
}

export function storeContract(target: StoreContractTarget): void {
  describe(`${target.name} store contract`, () => {
    let store: Store;
    let peer: Store;
    const opened = new Set<Store>();
    const open = async (create: () => Promise<Store>) => {
      const s = await create();
      opened.add(s);
      return s;
    };
    const key = (name: string) => uniqueName(`t:${name}`);
    const changesOf = async (watched: Store, prefix: string) => {
      const changes: Change[] = [];
      const unwatch = await watched.watch(prefix, (c) => void changes.push(c));
      return { changes, unwatch };
    };
    /**
     * Waits for as many changes as expected (and a moment for any beyond), then compares them key by
     * key: the changes of one key come in the order made, those of different keys may not (a Redis
     * Cluster announces each key's changes from the node that holds it).
     */
    const sameChanges = async (changes: Change[], expected: Change[], what: string) => {
      await waitFor(() => changes.length >= expected.length, {
        timeoutMs: 5000,
        what: `${what} (have ${JSON.stringify(changes)})`,
      });
      await sleep(200);
      assert.deepEqual(perKey(changes), perKey(expected), what);
    };
    // Generous: Redis expires a key in its active cycle, and a loaded CI box delays it and us.
    const sawChange = (changes: Change[], change: Change, what: string) =>
      waitFor(() => changes.some((c) => c.key === change.key && c.kind === change.kind), {
        timeoutMs: 15_000,
        what: `${what} (have ${JSON.stringify(changes)})`,
      });

    before(async () => {
      store = await open(() => target.createStore());
      peer = await open(() => target.openPeer(store));
    });
    after(async () => {
      for (const s of opened) await s.close();
    });

    it('gets, sets, deletes and tells whether a key exists', async () => {
      const k = key('basic');
      assert.equal(await store.get(k), undefined);
      assert.equal(await store.exists(k), false);
      assert.equal(await store.set(k, 'one'), true);
      assert.equal(await store.get(k), 'one');
      assert.equal(await peer.get(k), 'one', 'visible through another handle');
      assert.equal(await store.exists(k), true);
      assert.equal(await store.set(k, 'two ✓ "quoted"\nline'), true);
      assert.equal(await store.get(k), 'two ✓ "quoted"\nline');
      assert.equal(await store.set(k, ''), true);
      assert.equal(await store.get(k), '', 'an empty value is a value');
      assert.equal(await store.delete(k), true);
      assert.equal(await store.delete(k), false, 'second delete finds nothing');
      assert.equal(await store.get(k), undefined);
      assert.equal(await store.exists(k), false);
    });

    it('expires a key set with ttlSeconds on time', async () => {
      // Bounds with slack each way: a loaded CI box took 0.4 s between two calls.
      const k = key('ttl');
      const setAt = Date.now();
      await store.set(k, 'v', { ttlSeconds: 2 });
      assert.equal(await store.get(k), 'v', 'there at once');
      assert.equal(await store.exists(k), true);
      const left = await store.ttl(k);
      assert.ok(left !== undefined && left > 0 && left <= 2, `ttl ${left}`);
      while ((await store.exists(k)) && Date.now() - setAt < 8000) await sleep(100);
      const goneAfter = (Date.now() - setAt) / 1000;
      assert.ok(goneAfter >= 1.9, `gone at ${goneAfter} s, before its 2 s`);
      assert.equal(await store.get(k), undefined, `gone by ${goneAfter} s`);
      assert.deepEqual(await store.keys(k), []);
    });

    it('replaces the expiry when a key is set again', async () => {
      const k = key('reset');
      await store.set(k, 'short', { ttlSeconds: 1 });
      await store.set(k, 'forever');
      assert.equal(await store.ttl(k), Infinity);
      await sleep(1100);
      assert.equal(await store.get(k), 'forever');
    });

    it('reports the remaining lifetime', async () => {
      const forever = key('ttl-none');
      const timed = key('ttl-some');
      assert.equal(await store.ttl(key('ttl-missing')), undefined);
      await store.set(forever, 'v');
      assert.equal(await store.ttl(forever), Infinity);
      await store.set(timed, 'v', { ttlSeconds: 30 });
      const left = await store.ttl(timed);
      assert.ok(left !== undefined && left > 29 && left <= 30, `ttl about 30 s, got ${left}`);
      await sleep(500);
      const later = await store.ttl(timed);
      assert.ok(later !== undefined && later > 28.9 && later <= 29.6, `ttl about 29.5 s, got ${later}`);
    });

    it('sets ifAbsent only when the key is missing', async () => {
      const k = key('nx');
      assert.equal(await store.set(k, 'first', { ifAbsent: true }), true);
      assert.equal(await peer.set(k, 'second', { ifAbsent: true }), false);
      assert.equal(await store.get(k), 'first');
      await store.delete(k);
      assert.equal(await store.set(k, 'third', { ifAbsent: true, ttlSeconds: 1 }), true);
      await sleep(1100);
      assert.equal(await store.set(k, 'after expiry', { ifAbsent: true }), true, 'an expired key is absent');
      assert.equal(await store.get(k), 'after expiry');
    });

    it('compares and sets: only over the value expected, or a missing key, with its expiry', async () => {
      const k = key('cas');
      assert.equal(await store.compareAndSet(k, 'nothing', 'a'), false, 'a missing key holds no value');
      assert.equal(await store.compareAndSet(k, undefined, 'a'), true, 'missing, as expected');
      assert.equal(await peer.compareAndSet(k, undefined, 'b'), false, 'it exists now');
      assert.equal(await peer.compareAndSet(k, 'b', 'c'), false);
      assert.equal(await store.get(k), 'a');
      assert.equal(await peer.compareAndSet(k, 'a', 'b', { ttlSeconds: 1 }), true);
      assert.equal(await store.get(k), 'b');
      const ttl = await store.ttl(k);
      assert.ok(ttl !== undefined && ttl > 0 && ttl <= 1, `expires in ${ttl} s`);
      assert.equal(await store.compareAndSet(k, 'b', ''), true, 'an empty value is a value');
      assert.equal(await store.ttl(k), Infinity, 'set without ttlSeconds, it never expires');
      assert.equal(await store.compareAndSet(k, '', 'd'), true);
      assert.equal(await store.get(k), 'd');
    });

    it('lets exactly one of concurrent compareAndSets over one value win', async () => {
      const k = key('cas-race');
      await store.set(k, '0');
      const tries = Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? store : peer).compareAndSet(k, '0', String(i + 1)),
      );
      const won = (await Promise.all(tries)).flatMap((ok, i) => (ok ? [String(i + 1)] : []));
      assert.equal(won.length, 1, `winners: ${won}`);
      assert.equal(await store.get(k), won[0]);
    });

    it('announces a compareAndSet that set, and not one that did not', async () => {
      const prefix = key('cas-watch');
      const { changes, unwatch } = await changesOf(store, prefix);
      await peer.compareAndSet(`${prefix}:k`, 'other', 'v');
      await peer.compareAndSet(`${prefix}:k`, undefined, 'v');
      await sameChanges(changes, [{ key: `${prefix}:k`, kind: 'set' }], 'one set');
      await unwatch();
    });

    it('increments atomically across handles', async () => {
      const k = key('counter');
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? store : peer).increment(k)),
      );
      assert.equal(await store.get(k), '200');
      assert.deepEqual(
        [...results].sort((a, b) => a - b),
        Array.from({ length: 200 }, (_, i) => i + 1),
        'every increment saw a distinct value',
      );
      assert.equal(await store.increment(k, { by: -50 }), 150);
      assert.equal(await store.increment(k, { by: 7 }), 157);
      assert.equal(await store.ttl(k), Infinity, 'a counter without ttlSeconds never expires');
    });

    it('expires a counter after the ttl it was created with, whatever later increments ask', async () => {
      const k = key('rate');
      assert.equal(await store.increment(k, { ttlSeconds: 1 }), 1);
      await sleep(500);
      assert.equal(await peer.increment(k, { ttlSeconds: 1 }), 2);
      const left = await store.ttl(k);
      assert.ok(left !== undefined && left < 0.6, `expiry kept, not renewed (ttl ${left})`);
      await sleep(600);
      assert.equal(await store.get(k), undefined, 'counter gone 1.1 s after creation');
      assert.equal(await store.increment(k, { ttlSeconds: 1 }), 1, 'a new counter starts over');

      const plain = key('plain');
      await store.increment(plain);
      await store.increment(plain, { ttlSeconds: 1 });
      assert.equal(await store.ttl(plain), Infinity, 'an existing counter without expiry keeps none');
    });

    it('refuses to increment a value that is not an integer', async () => {
      for (const value of ['abc', '1.5', '']) {
        const k = key('text');
        await store.set(k, value);
        await assert.rejects(store.increment(k), `increment of '${value}'`);
        assert.equal(await store.get(k), value);
      }
    });

    it('appends to a list and takes it all, oldest first', async () => {
      const k = key('list');
      assert.deepEqual(await store.takeAll(k), [], 'a missing list is empty');
      assert.equal(await store.append(k, 'one'), 1);
      assert.equal(await peer.append(k, 'two ✓'), 2);
      assert.equal(await store.append(k, ''), 3);
      assert.equal(await store.exists(k), true);
      assert.deepEqual(await peer.takeAll(k), ['one', 'two ✓', '']);
      assert.deepEqual(await store.takeAll(k), [], 'taking removes');
      assert.equal(await store.exists(k), false);
    });

    it('lists a list without taking it, and removes given items once each', async () => {
      const k = key('acknowledged');
      assert.deepEqual(await store.list(k), [], 'a missing list is empty');
      assert.equal(await store.removeItems(k, ['a']), 0);
      for (const item of ['a', 'b', 'a', 'c ✓']) await store.append(k, item);
      assert.deepEqual(await peer.list(k), ['a', 'b', 'a', 'c ✓']);
      assert.deepEqual(await store.list(k), ['a', 'b', 'a', 'c ✓'], 'listing keeps them');
      assert.equal(await peer.removeItems(k, ['a', 'c ✓', 'never there']), 2);
      assert.deepEqual(await store.list(k), ['b', 'a'], 'the oldest a went, the newer one stayed');
      assert.equal(await store.removeItems(k, ['b', 'a']), 2);
      assert.equal(await store.exists(k), false, 'an emptied list is gone');
    });

    it('gives an existing key a new expiry with touch, and leaves a missing one missing', async () => {
      const k = key('touched');
      await store.set(k, 'v', { ttlSeconds: 1 });
      assert.equal(await peer.touch(k, 30), true);
      const left = await store.ttl(k);
      assert.ok(left !== undefined && left > 29 && left <= 30, `renewed (ttl ${left})`);
      assert.equal(await store.get(k), 'v');
      await sleep(1200);
      assert.equal(await store.get(k), 'v', 'outlived its first expiry');
      const missing = key('never-set');
      assert.equal(await store.touch(missing, 30), false);
      assert.equal(await store.exists(missing), false);
    });

    it('keeps only the newest maxLength items of a list', async () => {
      const k = key('bounded');
      for (let i = 1; i <= 5; i++)
        assert.equal(await store.append(k, `m${i}`, { maxLength: 3 }), Math.min(i, 3));
      assert.deepEqual(await store.takeAll(k), ['m3', 'm4', 'm5']);
    });

    it('renews the expiry of a list on every append with ttlSeconds', async () => {
      // Bounds with 1.5 s of slack: a loaded CI box can take 400 ms between two calls.
      const k = key('expiring-list');
      const first = Date.now();
      await store.append(k, 'a', { ttlSeconds: 4 });
      await sleep(2000);
      await store.append(k, 'b', { ttlSeconds: 4 });
      await store.append(k, 'c');
      const left = await store.ttl(k);
      // Not renewed, at most 2 s would be left; a later append without ttlSeconds keeps it.
      assert.ok(left !== undefined && left > 2.2 && left <= 4, `renewed, then kept (ttl ${left})`);
      await sleep(Math.max(0, first + 4500 - Date.now()));
      assert.equal(await store.exists(k), true, 'alive 4.5 s after the first append');
      const gone = Date.now() + 10_000;
      while ((await store.exists(k)) && Date.now() < gone) await sleep(200);
      assert.deepEqual(await store.takeAll(k), [], 'gone after the last ttl');
    });

    it('hands every appended item to exactly one taker', async () => {
      const k = key('queue');
      const taken: string[] = [];
      const appends = (async () => {
        for (let i = 0; i < 100; i++) await (i % 2 ? store : peer).append(k, String(i));
      })();
      let done = false;
      void appends.then(() => (done = true));
      while (!done) {
        taken.push(...(await Promise.all([store.takeAll(k), peer.takeAll(k)])).flat());
      }
      taken.push(...(await store.takeAll(k)));
      assert.deepEqual(
        taken.map(Number).sort((a, b) => a - b),
        Array.from({ length: 100 }, (_, i) => i),
      );
    });

    it('lists the keys under a prefix', async () => {
      const prefix = key('list') + ':';
      const names = ['a', 'b', 'c:d'].map((n) => prefix + n);
      for (const n of names) await store.set(n, n);
      await store.set(prefix.slice(0, -1) + 'x', 'beside the prefix');
      await store.set(prefix + 'gone', 'v', { ttlSeconds: 1 });
      await store.increment(prefix + 'n');
      assert.deepEqual((await peer.keys(prefix)).sort(), [...names, prefix + 'gone', prefix + 'n'].sort());
      await sleep(1100);
      assert.deepEqual((await store.keys(prefix)).sort(), [...names, prefix + 'n'].sort());
      assert.deepEqual(await store.keys(key('none')), []);
    });

    it('treats glob characters in a prefix literally', async () => {
      const base = key('glob');
      // Each decoy would match if the prefix went into a glob pattern unescaped.
      for (const [prefix, decoy] of [
        [`${base}:*?[x]`, `${base}:abx2`],
        [`${base}:a\\b`, `${base}:ab2`],
      ] as const) {
        await store.set(prefix + '1', 'v');
        await store.set(decoy, 'v');
        assert.deepEqual(await store.keys(prefix), [prefix + '1']);
      }
    });

    it('notifies watchers of sets and deletes made through another handle', async () => {
      const prefix = key('watch') + ':';
      const { changes, unwatch } = await changesOf(store, prefix);
      await peer.set(prefix + 'a', '1');
      await sawChange(changes, { key: prefix + 'a', kind: 'set' }, 'set through the peer');
      await peer.set(prefix + 'a', '2');
      await peer.delete(prefix + 'a');
      await sawChange(changes, { key: prefix + 'a', kind: 'delete' }, 'delete through the peer');
      await peer.set(key('elsewhere'), 'not watched');
      await peer.delete(prefix + 'never-set');
      await peer.set(prefix + 'z', 'last');
      await sameChanges(
        changes,
        [
          { key: prefix + 'a', kind: 'set' },
          { key: prefix + 'a', kind: 'set' },
          { key: prefix + 'a', kind: 'delete' },
          { key: prefix + 'z', kind: 'set' },
        ],
        'every change under the prefix',
      );
      await unwatch();
      await peer.set(prefix + 'after', 'unwatched');
      await sleep(300);
      assert.equal(changes.length, 4, 'nothing after unwatch');
    });

    it('does not announce a set refused by ifAbsent', async () => {
      const prefix = key('watch-nx') + ':';
      const { changes, unwatch } = await changesOf(store, prefix);
      await peer.set(prefix + 'k', 'first', { ifAbsent: true });
      await peer.set(prefix + 'k', 'refused', { ifAbsent: true });
      await peer.set(prefix + 'end', 'x');
      await sameChanges(
        changes,
        [
          { key: prefix + 'k', kind: 'set' },
          { key: prefix + 'end', kind: 'set' },
        ],
        'the first set and the closing one',
      );
      await unwatch();
    });

    it('notifies watchers of appends, takes and removals', async () => {
      const prefix = key('watch-list') + ':';
      const { changes, unwatch } = await changesOf(store, prefix);
      await peer.append(prefix + 'q', 'item');
      await peer.takeAll(prefix + 'q');
      await peer.takeAll(prefix + 'q');
      await peer.append(prefix + 'r', 'one');
      await peer.append(prefix + 'r', 'two');
      await peer.removeItems(prefix + 'r', ['one']);
      await peer.removeItems(prefix + 'r', ['not there']);
      await peer.removeItems(prefix + 'r', ['two']);
      await peer.set(prefix + 'end', 'x');
      await sameChanges(
        changes,
        [
          { key: prefix + 'q', kind: 'set' },
          { key: prefix + 'q', kind: 'delete' },
          { key: prefix + 'r', kind: 'set' },
          { key: prefix + 'r', kind: 'set' },
          { key: prefix + 'r', kind: 'set' },
          { key: prefix + 'r', kind: 'delete' },
          { key: prefix + 'end', kind: 'set' },
        ],
        'every list change',
      );
      await unwatch();
    });

    it('notifies watchers when a key expires', async () => {
      const prefix = key('watch-exp') + ':';
      const { changes, unwatch } = await changesOf(store, prefix);
      await peer.set(prefix + 'k', 'v', { ttlSeconds: 1 });
      await peer.increment(prefix + 'counter', { ttlSeconds: 1 });
      await sawChange(changes, { key: prefix + 'k', kind: 'expire' }, 'expiry of a key');
      await sawChange(changes, { key: prefix + 'counter', kind: 'expire' }, 'expiry of a counter');
      await unwatch();
    });

    it('keeps several watchers apart', async () => {
      const base = key('watchers');
      const one = await changesOf(store, `${base}:one:`);
      const all = await changesOf(peer, `${base}:`);
      await peer.set(`${base}:two:k`, 'v');
      await store.set(`${base}:one:k`, 'v');
      await sameChanges(
        all.changes,
        [
          { key: `${base}:two:k`, kind: 'set' },
          { key: `${base}:one:k`, kind: 'set' },
        ],
        'both changes under the wide prefix',
      );
      await sameChanges(
        one.changes,
        [{ key: `${base}:one:k`, kind: 'set' }],
        'one change under the narrow prefix',
      );
      await one.unwatch();
      await all.unwatch();
    });

    it('answers ping', async () => {
      await store.ping();
    });

    // As unavailable (StoreUnavailableError): a request still in flight while its service shuts
    // down gets a 503 with Retry-After, not a 400 ("invalid JWT: … closed") or a 500.
    it('rejects every operation after close, as unavailable', async () => {
      const closed = await target.createStore();
      await closed.set('k', 'v');
      await closed.close();
      const unavailable = (err: unknown) => {
        assert.ok(err instanceof StoreUnavailableError, `${(err as Error).name}: ${(err as Error).message}`);
        assert.equal(isUnavailable(err), true);
        return true;
      };
      await assert.rejects(closed.get('k'), unavailable);
      await assert.rejects(closed.set('k', 'v'), unavailable);
      await assert.rejects(closed.delete('k'), unavailable);
      await assert.rejects(closed.exists('k'), unavailable);
      await assert.rejects(closed.compareAndSet('k', undefined, 'v'), unavailable);
      await assert.rejects(closed.ttl('k'), unavailable);
      await assert.rejects(closed.increment('n'), unavailable);
      await assert.rejects(closed.append('l', 'v'), unavailable);
      await assert.rejects(closed.takeAll('l'), unavailable);
      await assert.rejects(closed.list('l'), unavailable);
      await assert.rejects(closed.removeItems('l', ['v']), unavailable);
      await assert.rejects(closed.touch('k', 1), unavailable);
      await assert.rejects(closed.keys(''), unavailable);
      await assert.rejects(
        closed.watch('', () => {}),
        unavailable,
      );
      await assert.rejects(closed.ping(), unavailable);
    });

    it('keeps every key and goes on working after the server restarts', async (t) => {
      if (!target.restartServer) return t.skip('no server to restart');
      const prefix = key('restart') + ':';
      await store.set(prefix + 'plain', 'kept');
      await store.set(prefix + 'timed', 'kept too', { ttlSeconds: 600 });
      await store.increment(prefix + 'count', { by: 5 });
      const { changes, unwatch } = await changesOf(store, prefix);

      await target.restartServer();

      const plain = await eventually(() => store.get(prefix + 'plain'), { what: 'a read after restart' });
      assert.equal(plain, 'kept');
      assert.equal(await store.get(prefix + 'timed'), 'kept too');
      const left = await store.ttl(prefix + 'timed');
      assert.ok(left !== undefined && left > 500 && left <= 600, `expiry kept (ttl ${left})`);
      assert.equal(await store.increment(prefix + 'count'), 6);
      await store.ping();
      await eventually(() => peer.ping(), { what: 'the peer to reconnect' });
      // The watcher resubscribes in the background: keep changing a key until it hears one.
      await waitFor(
        async () => {
          await peer.set(prefix + 'after', 'v');
          return changes.some((c) => c.key === prefix + 'after' && c.kind === 'set');
        },
        { timeoutMs: 30_000, intervalMs: 200, what: 'the watcher to hear a change after restart' },
      );
      await peer.set(prefix + 'short', 'v', { ttlSeconds: 1 });
      await sawChange(changes, { key: prefix + 'short', kind: 'expire' }, 'an expiry after restart');
      assert.ok(
        changes.some((c) => c.key === prefix && c.kind === 'resync'),
        'the watcher was told it had been cut off (resync, with the watched prefix as key)',
      );
      await unwatch();
    });
  });
}

/** Each key's kinds of change, in the order they came. */
function perKey(changes: Change[]): Record<string, string[]> {
  const kinds: Record<string, string[]> = {};
  for (const c of changes) kinds[c.key] = [...(kinds[c.key] ?? []), c.kind];
  return kinds;
}
