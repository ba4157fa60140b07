/**
 * The Metadata answer read for a topic id comes from the broker: a cut or malformed one is an error,
 * never a read past its end or a loop; a well-formed one gives the first topic's error and id.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readTopicId } from '../src/kafka-topic-id.ts';
import { formatKafkaPosition, parseKafkaPosition } from '../src/kafka-position.ts';

const id = Buffer.from('6b42ad8b7c9a4d35a6c1f922f13c95e5', 'hex');
const compact = (text: string) => Buffer.concat([Buffer.from([text.length + 1]), Buffer.from(text)]);
const int32 = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);

/** A Metadata v12 answer (after the correlation id) with one broker and one topic. */
function answer(errorCode: number): Buffer {
  return Buffer.concat([
    Buffer.from([0]), // header tags
    int32(0), // throttle
    Buffer.from([2]), // one broker
    int32(1),
    compact('localhost'),
    int32(9092),
    Buffer.from([0]), // no rack
    Buffer.from([0]), // tags
    compact('cluster'),
    int32(1), // controller
    Buffer.from([2]), // one topic
    Buffer.from([0, errorCode]),
    compact('gw.events'),
    id,
    Buffer.from([0]), // is_internal
    Buffer.from([1]), // no partitions
  ]);
}

describe('reading a topic id from a Metadata answer', () => {
  it('reads the first topic’s error and id', () => {
    assert.deepEqual(readTopicId(answer(0)), { errorCode: 0, topicId: id.toString('hex') });
    assert.equal(readTopicId(answer(3)).errorCode, 3);
  });

  it('throws for every answer cut short, and for a varint that never ends', () => {
    const full = answer(0);
    const idEnd = full.length - 2;
    for (let length = 0; length < idEnd; length++)
      assert.throws(
        () => readTopicId(full.subarray(0, length)),
        /cut short|no topic|varint/,
        `cut at ${length}`,
      );
    assert.throws(() => readTopicId(Buffer.alloc(64, 0xff)), /varint too long|cut short/);
  });
});

describe('kafka positions', () => {
  it('carry an optional epoch and the origin offset -1, and refuse anything else', () => {
    assert.deepEqual(parseKafkaPosition('0-42.6b42ad8b'), { partition: 0, offset: 42n, epoch: '6b42ad8b' });
    assert.deepEqual(parseKafkaPosition('0-42'), { partition: 0, offset: 42n, epoch: undefined });
    assert.deepEqual(parseKafkaPosition('0--1'), { partition: 0, offset: -1n, epoch: undefined });
    assert.equal(formatKafkaPosition(0, -1n, '6b42ad8b'), '0--1.6b42ad8b');
    for (const bad of ['0-42.', '0-42.6B42AD8B', '0-42.6b42ad8b9', '0--2', '-1', '0-42.x', '0-4.2'])
      assert.throws(() => parseKafkaPosition(bad), /not a kafka position/, bad);
  });
});
