import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '@gatehouse/testkit';
import { defaultRestartPolicy, RestartLoop, restartDelayMs } from '../../src/flow-adapters/restart-loop.ts';

describe('restart backoff', () => {
  it('doubles from 1 s to 30 s, half of it jittered', () => {
    const low = (n: number) => restartDelayMs(n, defaultRestartPolicy, () => 0);
    const high = (n: number) => restartDelayMs(n, defaultRestartPolicy, () => 1);
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5, 6, 60].map(high),
      [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000],
    );
    assert.deepEqual([0, 5, 1000].map(low), [500, 15000, 15000]);
  });
});

describe('RestartLoop', () => {
  it('tries again after each failure until the start succeeds, counting every try', async () => {
    let calls = 0;
    const tries: Array<{ attempt: number; failed: boolean }> = [];
    const loop = new RestartLoop(
      async () => {
        if (++calls < 3) throw new Error('broker away');
      },
      (attempt, err) => tries.push({ attempt, failed: err !== undefined }),
      { firstMs: 1, maxMs: 4 },
    );
    loop.schedule();
    await waitFor(() => tries.length === 3 || undefined, { timeoutMs: 5_000, what: 'three tries' });
    assert.deepEqual(tries, [
      { attempt: 0, failed: true },
      { attempt: 1, failed: true },
      { attempt: 2, failed: false },
    ]);
    assert.equal(loop.pending, false, 'nothing more scheduled once it runs');
  });

  it('never starts once stopped', async () => {
    let calls = 0;
    const loop = new RestartLoop(
      async () => {
        calls++;
      },
      () => undefined,
      { firstMs: 1, maxMs: 1 },
    );
    loop.schedule();
    loop.stop();
    loop.schedule();
    assert.equal(loop.pending, false);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(calls, 0);
  });
});
