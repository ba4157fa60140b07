/** A NATS message (core or JetStream) as an adapter record: headers as text, the metadata map. */
import type { JsMsg } from '@nats-io/jetstream';
import type { Msg, MsgHdrs } from '@nats-io/transport-node';
import type { InboundRecord } from './record-run.ts';

export function natsRecordOf(msg: Msg | JsMsg, stream: string | undefined): InboundRecord {
  const { headers, bytes } = headersOf(msg.headers);
  const metadata: Record<string, unknown> = { subject: msg.subject };
  if (stream !== undefined && 'seq' in msg) {
    metadata['stream'] = stream;
    metadata['sequence'] = msg.seq;
    metadata['timestamp'] = Math.floor(Number(msg.info.timestampNanos) / 1e6);
    metadata['redelivered'] = msg.redelivered;
  } else metadata['timestamp'] = Date.now();
  const value = Buffer.from(msg.data.buffer, msg.data.byteOffset, msg.data.byteLength);
  return { value, headers, metadata, bytes: bytes + value.length, source: `nats://${msg.subject}` };
}

function headersOf(given: MsgHdrs | undefined): { headers: Record<string, string>; bytes: number } {
  const entries: Array<[string, string]> = [];
  let bytes = 0;
  for (const [name, values] of given ?? []) {
    // The bound counts what the broker carried, in bytes: every value of a repeated header.
    for (const v of values) bytes += Buffer.byteLength(name) + Buffer.byteLength(v);
    entries.push([name.toLowerCase(), values.at(-1) ?? '']);
  }
  // fromEntries makes every name an own data key, `__proto__` included (an assignment would not).
  return { headers: Object.fromEntries(entries), bytes };
}
