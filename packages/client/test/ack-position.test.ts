import assert from 'node:assert/strict';
import { it } from 'node:test';
import { AckPosition } from '../src/ack-position.ts';

it('moves to the last of the events handled without a gap, in arrival order, not in handling order', () => {
  const acks = new AckPosition(() => {});
  const [a, b, c] = ['p1', 'p2', 'p3'].map((p) => acks.arrived([p], p, true)!);
  assert.equal(acks.handled(c!), false, 'p1 and p2 are still being handled');
  assert.equal(acks.position, undefined);
  assert.equal(acks.handled(a!), true);
  assert.equal(acks.position, 'p1');
  assert.equal(acks.handled(b!), true);
  assert.equal(acks.position, 'p3');
});

it('counts a position reached with nothing to handle as handled, but not past an event still being handled', () => {
  const acks = new AckPosition(() => {});
  assert.equal(acks.reached('p1'), true);
  const slow = acks.arrived(['p2'], 'p2', true)!;
  assert.equal(acks.reached('p3'), false);
  assert.equal(acks.position, 'p1');
  acks.handled(slow);
  assert.equal(acks.position, 'p3');
});

it('gives a long-poll answer its position once all of its events (which have none) are handled', () => {
  const acks = new AckPosition(() => {});
  const a = acks.arrived(['src\na'], undefined, true)!;
  const b = acks.arrived(['src\nb'], undefined, true)!;
  acks.reached('cursor-1');
  acks.handled(b);
  assert.equal(acks.position, undefined);
  acks.handled(a);
  assert.equal(acks.position, 'cursor-1');
});

it('holds the position at a failed event, hands its copy again, and drops copies of the others', () => {
  const acks = new AckPosition(() => {});
  const [a, b, c] = ['p1', 'p2', 'p3'].map((p) => acks.arrived([p, `src\n${p}`], p, true)!);
  acks.handled(a!);
  acks.failed(b!);
  acks.handled(c!);
  assert.equal(acks.position, 'p1');
  // The redelivery after p1, by position or by source and id.
  const again = acks.arrived(['p2', 'src\np2'], 'p2', false);
  assert.equal(again, b, 'the failed one is handed again');
  assert.equal(
    acks.arrived(['other-position', 'src\np3'], undefined, false),
    undefined,
    'a handled one is not',
  );
  assert.equal(acks.arrived(['p2'], 'p2', false), undefined, 'nor one being handled again');
  acks.handled(again!);
  assert.equal(acks.position, 'p3');
});

it('drops a copy that arrives while its event is still being handled (a late handler)', () => {
  const acks = new AckPosition(() => {});
  const slow = acks.arrived(['p1'], 'p1', true)!;
  assert.equal(acks.arrived(['p1'], 'p1', false), undefined);
  acks.handled(slow);
  assert.equal(acks.position, 'p1');
});

it('forgets what is at or before its position: a copy of it is dropped when seen before, handed when not', () => {
  const acks = new AckPosition(() => {});
  acks.handled(acks.arrived(['p1'], 'p1', true)!);
  assert.equal(acks.entry('p1'), undefined, 'held only from the first entry not handled');
  assert.equal(acks.arrived(['p1'], 'p1', false), undefined);
  assert.notEqual(acks.arrived(['p1'], 'p1', true), undefined);
  assert.equal(acks.position, 'p1', 'an event handed again does not move the position back');
});

it('a failure reported after the handling succeeded changes nothing', () => {
  const acks = new AckPosition(() => {});
  const a = acks.arrived(['p1'], 'p1', true)!;
  acks.handled(a);
  acks.failed(a);
  assert.equal(acks.position, 'p1');
});

/** An AckPosition whose give-ups count the entry handled (as the client's do), and the events given up. */
const givingUp = (limits: { maxAttempts?: number; maxPending?: number }) => {
  const givenUp: unknown[] = [];
  const acks: AckPosition = new AckPosition((entry) => {
    givenUp.push(entry.event);
    acks.handled(entry);
  }, limits);
  return { acks, givenUp };
};

it('gives an event up when its handling failed maxAttempts times, and the position moves past it', () => {
  const { acks, givenUp } = givingUp({ maxAttempts: 3 });
  const a = acks.arrived(['p1'], 'p1', true, 'event 1')!;
  acks.handled(acks.arrived(['p2'], 'p2', true, 'event 2')!);
  for (let tries = 1; tries < 3; tries++) {
    acks.failed(a);
    assert.equal(acks.arrived(['p1'], 'p1', false), a, `handed again after failure ${tries}`);
  }
  assert.deepEqual(givenUp, []);
  acks.failed(a);
  assert.deepEqual(givenUp, ['event 1']);
  assert.equal(acks.position, 'p2');
  assert.equal(acks.arrived(['p1'], 'p1', false), undefined, 'a copy of it is dropped');
});

it('beyond maxPending entries, positions reached included, gives up the oldest not handled, and only it', () => {
  const { acks, givenUp } = givingUp({ maxPending: 3 });
  const stuck = acks.arrived(['p1'], 'p1', true, 'event 1')!;
  const failed = acks.arrived(['p2'], 'p2', true, 'event 2')!;
  acks.failed(failed);
  acks.reached('p3');
  assert.deepEqual(givenUp, []);
  acks.reached('p4');
  assert.deepEqual(givenUp, ['event 1']);
  assert.equal(acks.position, 'p1', 'held at the failed event behind it');
  acks.handled(stuck);
  assert.equal(acks.position, 'p1', 'its handling ending later changes nothing');
  acks.handled(acks.arrived(['p2'], 'p2', false)!);
  assert.equal(acks.position, 'p4');
});
