/**
 * The wait for a resume position past the ring's newest event (stream-ahead.ts), with positions
 * `<n>.<epoch>` and a clock the test moves: bounded in connects waiting at once, each resolved when
 * the stream reaches it or at its deadline, lowest first, and none left behind by a new epoch.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep } from '@gatehouse/testkit';
import { createStreamAhead } from '../../src/admission/index.ts';

function stream(maxWaiting: number) {
  let head: string | undefined = '10.a';
  let t = 0;
  const parse = (p: string) => {
    const m = /^(\d+)\.([a-z])$/.exec(p);
    if (!m) throw new Error(`malformed position ${p}`);
    return { n: Number(m[1]), epoch: m[2]! };
  };
  let compares = 0;
  const wait = createStreamAhead({
    head: () => head,
    compare: (a, b) => {
      compares++;
      return parse(a).n - parse(b).n;
    },
    epochOf: (p) => parse(p).epoch,
    maxWaitMs: 5000,
    maxWaiting,
    pollMs: 5,
    now: () => t,
  });
  const settled = new Set<string>();
  const waitFor = (p: string, label = p) => {
    const w = wait(p);
    if (w === undefined) return false;
    void w.then(() => settled.add(label));
    return true;
  };
  return {
    waitFor,
    settled,
    moveHead: (p: string | undefined) => {
      head = p;
    },
    at: (ms: number) => {
      t = ms;
    },
    compares: () => compares,
  };
}

/** Several of the wait's looks. */
const looks = () => sleep(40);

describe('waiting for a resume position ahead of the ring', () => {
  it('answers at once for a position not ahead, of another epoch, or malformed', () => {
    const s = stream(10);
    assert.equal(s.waitFor('10.a'), false, 'the newest event itself');
    assert.equal(s.waitFor('3.a'), false);
    assert.equal(s.waitFor('11.b'), false, 'another epoch');
    assert.equal(s.waitFor('x'), false, 'malformed');
    s.moveHead(undefined);
    assert.equal(s.waitFor('11.a'), false, 'an empty ring');
  });

  it('resolves each waiter once the stream reaches its position, lowest first', async () => {
    const s = stream(10);
    for (const p of ['14.a', '12.a', '13.a']) assert.equal(s.waitFor(p), true);
    s.moveHead('12.a');
    await looks();
    assert.deepEqual([...s.settled], ['12.a']);
    s.moveHead('14.a');
    await looks();
    assert.deepEqual([...s.settled].sort(), ['12.a', '13.a', '14.a']);
  });

  it('resolves a position never reached at its deadline', async () => {
    const s = stream(10);
    s.waitFor('1000000.a');
    s.at(4999);
    await looks();
    assert.equal(s.settled.size, 0);
    s.at(5000);
    await looks();
    assert.deepEqual([...s.settled], ['1000000.a']);
  });

  it('answers at once past maxWaiting, and takes waiters again as they are resolved', async () => {
    const s = stream(3);
    for (let i = 1; i <= 3; i++) assert.equal(s.waitFor(`${100 + i}.a`), true);
    assert.equal(s.waitFor('200.a'), false, 'the fourth at once: counted as new');
    s.moveHead('101.a');
    await looks();
    assert.equal(s.waitFor('200.a'), true, 'a place is free again');
  });

  it('costs nothing per look for waiters the stream has not reached, however many', async () => {
    const s = stream(1000);
    for (let i = 0; i < 1000; i++) s.waitFor(`${1_000_000 + i}.a`);
    const before = s.compares();
    for (let head = 11; head < 20; head++) {
      s.moveHead(`${head}.a`);
      await sleep(6);
    }
    // One comparison with the lowest waiting position per look, not one per waiter.
    assert.ok(s.compares() - before < 100, `${s.compares() - before} comparisons`);
  });

  it('resolves every waiter when the stream is made anew (another epoch)', async () => {
    const s = stream(10);
    s.waitFor('20.a');
    s.waitFor('30.a');
    s.moveHead('1.b');
    await looks();
    assert.deepEqual([...s.settled].sort(), ['20.a', '30.a']);
  });

  it('resolves every waiter at its deadline while others keep coming past a full bound', async () => {
    const s = stream(2);
    let t = 0;
    // Twice the bound done at their deadline while others wait: the orders are compacted on the way.
    for (let round = 0; round < 50; round++) {
      assert.equal(s.waitFor(`${1_000_000 + round}.a`, `r${round}`), true, `round ${round}`);
      t += 3000;
      s.at(t);
      await sleep(12);
    }
    // Every waiter but the newest two were resolved at their deadlines, none was left waiting.
    assert.ok(s.settled.size >= 48, `${s.settled.size} resolved`);
  });
});
