/** A kafkajs message as an adapter record: headers as text with lower-cased names, the metadata map. */
import type { KafkaMessage } from 'kafkajs';
import type { InboundRecord } from './record-run.ts';

export function kafkaRecordOf(topic: string, partition: number, message: KafkaMessage): InboundRecord {
  const entries: Array<[string, string]> = [];
  let bytes = (message.value?.length ?? 0) + (message.key?.length ?? 0);
  for (const [name, raw] of Object.entries(message.headers ?? {})) {
    if (raw === undefined) continue;
    const values = Array.isArray(raw) ? raw : [raw];
    // The bound counts what the broker carried, in bytes: every value of a repeated header. Only
    // buffers: kafkajs folds a header named `__proto__` with Object.prototype into a pair.
    for (const v of values) if (Buffer.isBuffer(v)) bytes += Buffer.byteLength(name) + v.length;
    // A repeated header: the last value, as a map of names can hold one.
    const value = values.at(-1);
    entries.push([name.toLowerCase(), value === undefined ? '' : value.toString()]);
  }
  // fromEntries makes every name an own data key, `__proto__` included (an assignment would not).
  const headers: Record<string, string> = Object.fromEntries(entries);
  const metadata: Record<string, unknown> = {
    topic,
    partition,
    offset: Number(message.offset),
    timestamp: Number(message.timestamp),
  };
  if (message.key !== null && message.key !== undefined) metadata['key'] = message.key.toString('utf8');
  return { value: message.value ?? null, headers, metadata, bytes, source: `kafka://${topic}` };
}
