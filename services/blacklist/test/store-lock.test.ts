import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryStore, type SetOptions, StoreUnavailableError } from '@gatehouse/store';
import { LockTimeoutError, withStoreLock } from '../src/store-lock.ts';

/** Its next take lands, but its answer is lost (a paused Redis that goes on after our time-out). */
class LostAnswerStore extends MemoryStore {
  loseNextAnswer = false;
  override async set(key: string, value: string, options?: SetOptions): Promise<boolean> {
    const landed = await super.set(key, value, options);
    if (this.loseNextAnswer) {
      this.loseNextAnswer = false;
      throw new StoreUnavailableError('redis SET failed: Command timed out');
    }
    return landed;
  }
}

const options = { ttlSeconds: 10, waitMs: 200, retryMs: 10 };

describe('store lock', () => {
  it('adopts a lock its own unanswered take left, instead of waiting out its expiry', async () => {
    const store = new LostAnswerStore();
    store.loseNextAnswer = true;
    await assert.rejects(
      withStoreLock(store, 'lock:a', options, async () => 'never'),
      StoreUnavailableError,
    );
    assert.ok(await store.exists('lock:a'), 'the take landed nonetheless');
    // Waiting for the lock would end at its 10 s expiry or at this 10 s wait: far above an
    // adoption's time, so the two are told apart on a loaded machine too.
    const patient = { ...options, waitMs: 10_000 };
    const started = Date.now();
    assert.equal(await withStoreLock(store, 'lock:a', patient, async () => 'done'), 'done');
    assert.ok(Date.now() - started < 5000, `at once, not after the 10 s wait (${Date.now() - started} ms)`);
    assert.equal(await store.exists('lock:a'), false, 'released after the work');
  });

  it('waits for a lock someone else holds, and gives up after waitMs', async () => {
    const store = new LostAnswerStore();
    await store.set('lock:b', 'someone-else', { ttlSeconds: 10 });
    await assert.rejects(
      withStoreLock(store, 'lock:b', options, async () => 'never'),
      LockTimeoutError,
    );
  });
});
