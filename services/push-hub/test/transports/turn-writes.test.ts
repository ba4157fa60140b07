import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { type TurnMark, writeInTurn } from '../../src/transports/turn-writes.ts';

/** A stream that records each write it is handed below the stream layer (one per system call on a socket). */
function recordingStream(): { stream: Writable; writes: string[][]; mark: TurnMark } {
  const writes: string[][] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      writes.push([String(chunk)]);
      done();
    },
    writev(chunks, done) {
      writes.push(chunks.map((c) => String(c.chunk)));
      done();
    },
  });
  return { stream, writes, mark: { writtenInTurn: 0 } };
}

const nextTick = () => new Promise((resolve) => process.nextTick(resolve));

describe('writes in one turn', () => {
  it('send the first at once and the rest of the turn as one write on the next tick, in order', async () => {
    const a = recordingStream();
    const b = recordingStream();
    writeInTurn(a.stream, Buffer.from('1'), a.mark);
    writeInTurn(b.stream, Buffer.from('x'), b.mark);
    writeInTurn(a.stream, Buffer.from('2'), a.mark);
    writeInTurn(a.stream, Buffer.from('3'), a.mark);
    assert.deepEqual(a.writes, [['1']], 'a single event waits for nothing');
    assert.deepEqual(b.writes, [['x']]);
    await nextTick();
    assert.deepEqual(a.writes, [['1'], ['2', '3']]);
    assert.equal(a.stream.writableCorked, 0);
  });

  it('start over in the next turn', async () => {
    const a = recordingStream();
    writeInTurn(a.stream, Buffer.from('1'), a.mark);
    await nextTick();
    writeInTurn(a.stream, Buffer.from('2'), a.mark);
    await nextTick();
    assert.deepEqual(a.writes, [['1'], ['2']]);
  });

  it('leave a stream corked by someone else to them, adding to what they send', async () => {
    const a = recordingStream();
    a.stream.cork();
    writeInTurn(a.stream, Buffer.from('1'), a.mark);
    writeInTurn(a.stream, Buffer.from('2'), a.mark);
    await nextTick();
    assert.deepEqual(a.writes, [], 'still corked by its owner');
    a.stream.uncork();
    assert.deepEqual(a.writes, [['1', '2']]);
  });
});
