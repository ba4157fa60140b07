import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { writeInTurn } from '../src/transports/turn-writes.ts';

/** A stream that records each write it is handed below the stream layer (one per system call on a socket). */
function recordingStream(): { stream: Writable; writes: string[][] } {
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
  return { stream, writes };
}

const nextTick = () => new Promise((resolve) => process.nextTick(resolve));

describe('writes in one turn', () => {
  it('reach each stream as one write, in order, on the next tick', async () => {
    const a = recordingStream();
    const b = recordingStream();
    writeInTurn(a.stream, Buffer.from('1'));
    writeInTurn(b.stream, Buffer.from('x'));
    writeInTurn(a.stream, Buffer.from('2'));
    writeInTurn(a.stream, Buffer.from('3'));
    assert.deepEqual(a.writes, [], 'nothing is written during the turn');
    await nextTick();
    assert.deepEqual(a.writes, [['1', '2', '3']]);
    assert.deepEqual(b.writes, [['x']]);
    assert.equal(a.stream.writableCorked, 0);
  });

  it('start over in the next turn', async () => {
    const a = recordingStream();
    writeInTurn(a.stream, Buffer.from('1'));
    await nextTick();
    writeInTurn(a.stream, Buffer.from('2'));
    await nextTick();
    assert.deepEqual(a.writes, [['1'], ['2']]);
  });

  it('leave a stream corked by someone else to them, adding to what they send', async () => {
    const a = recordingStream();
    a.stream.cork();
    writeInTurn(a.stream, Buffer.from('1'));
    await nextTick();
    assert.deepEqual(a.writes, [], 'still corked by its owner');
    a.stream.uncork();
    assert.deepEqual(a.writes, [['1']]);
  });
});
