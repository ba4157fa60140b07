import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecentKills } from '../../src/blacklist/index.ts';

describe('RecentKills', () => {
  const clock = () => {
    let t = 1000;
    return {
      now: () => t,
      at: (ms: number) => {
        t = ms;
      },
    };
  };

  it('tells a kill heard at or after a connect began its checks, not one heard before', () => {
    const c = clock();
    const kills = new RecentKills({ keepMs: 60_000, maxSessions: 10, now: c.now });
    c.at(2000);
    kills.heard('s');
    assert.equal(kills.killedSince('s', 1500), true, 'checks began before the kill: its read may be stale');
    assert.equal(kills.killedSince('s', 2000), true, 'the same instant counts as before');
    assert.equal(kills.killedSince('s', 2001), false, 'checks began after the kill was heard, so written');
    assert.equal(kills.killedSince('other', 0), false);
  });

  it('forgets the oldest kills beyond maxSessions, and a kill heard again is the newest', () => {
    const c = clock();
    const kills = new RecentKills({ keepMs: 60_000, maxSessions: 3, now: c.now });
    for (const s of ['a', 'b', 'c']) kills.heard(s);
    kills.heard('a');
    kills.heard('d');
    assert.equal(kills.size, 3);
    assert.equal(kills.killedSince('b', 0), false, 'b was the oldest');
    for (const s of ['a', 'c', 'd']) assert.equal(kills.killedSince(s, 0), true, s);
  });

  it('forgets kills older than keepMs when it hears another', () => {
    const c = clock();
    const kills = new RecentKills({ keepMs: 1000, maxSessions: 100, now: c.now });
    kills.heard('old');
    c.at(1500);
    kills.heard('mid');
    c.at(2400);
    kills.heard('new');
    assert.deepEqual(
      ['old', 'mid', 'new'].map((s) => kills.killedSince(s, 0)),
      [false, true, true],
    );
    assert.equal(kills.size, 2);
  });

  it('tells whether the store watch listened again since a connect began its checks', () => {
    const c = clock();
    const kills = new RecentKills({ keepMs: 1000, maxSessions: 100, now: c.now });
    assert.equal(kills.resumedSince(0), false, 'never cut off');
    c.at(5000);
    kills.watchResumed();
    assert.equal(kills.resumedSince(4000), true);
    assert.equal(kills.resumedSince(5001), false);
  });
});
