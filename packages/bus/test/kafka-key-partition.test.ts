import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Partitioners, type PartitionMetadata } from 'kafkajs';
import { murmur2, partitionForKey } from '../src/kafka-key-partition.ts';

describe('kafka key partition', () => {
  it("hashes like Kafka's murmur2 (the vectors of Kafka's UtilsTest)", () => {
    const vectors: [string, number][] = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
      ['abc', 479470107],
      ['', 275646681],
    ];
    for (const [text, hash] of vectors) assert.equal(murmur2(Buffer.from(text)), hash, text);
  });

  it("puts every key on the partition kafkajs' DefaultPartitioner chooses", () => {
    const keys = Array.from({ length: 500 }, (_, i) => `key-${i}-${'é✓'.repeat(i % 4)}${'x'.repeat(i % 7)}`);
    for (const count of [1, 2, 3, 7, 12, 100]) {
      const partitionMetadata: PartitionMetadata[] = Array.from({ length: count }, (_, partitionId) => ({
        partitionErrorCode: 0,
        partitionId,
        leader: 1,
        replicas: [1],
        isr: [1],
      }));
      const kafkajs = Partitioners.DefaultPartitioner();
      for (const key of keys) {
        const expected = kafkajs({ topic: 't', partitionMetadata, message: { key, value: 'v' } });
        assert.equal(partitionForKey(key, count), expected, `${key} over ${count} partitions`);
      }
    }
  });
});
