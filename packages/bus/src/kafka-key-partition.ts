/**
 * The partition of a keyed Kafka message as the Java client's default partitioner (and kafkajs'
 * DefaultPartitioner) chooses it: murmur2 of the key's UTF-8 bytes, made positive, modulo the
 * partition count. The Kafka adapter picks partitions itself (to know each message's offset in a
 * batched produce request) and must send every key where Java and kafkajs producers send it.
 */

const seed = 0x9747b28c;
const m = 0x5bd1e995;

/** Kafka's murmur2 (org.apache.kafka.common.utils.Utils#murmur2): 32-bit int arithmetic throughout. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = seed ^ length;
  const tail = length & 3;
  const body = length - tail;
  for (let i = 0; i < body; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  if (tail === 3) h ^= data[body + 2]! << 16;
  if (tail >= 2) h ^= data[body + 1]! << 8;
  if (tail >= 1) h = Math.imul(h ^ data[body]!, m);
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}

export function partitionForKey(key: string, partitionCount: number): number {
  return (murmur2(Buffer.from(key)) & 0x7fffffff) % partitionCount;
}
