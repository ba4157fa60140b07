/**
 * How a message is laid out in a Redis stream entry: field `v` holds the value, `k` the key (absent
 * for keyless messages) and `h:<name>` each header. Values and headers go in and come out as bytes,
 * so binary values survive unchanged.
 */
import { type Message, type OutgoingMessage, toBuffer } from './bus.ts';
import { withEpoch } from './position-epoch.ts';

/** An entry as XREAD, XREADGROUP and XAUTOCLAIM return it with the Buffer commands. */
export type StreamEntry = [id: Buffer, fields: Buffer[] | null];

const headerPrefix = 'h:';

export function toStreamFields(message: OutgoingMessage): Array<string | Buffer> {
  const fields: Array<string | Buffer> = ['v', toBuffer(message.value)];
  if (message.key !== undefined) fields.push('k', message.key);
  for (const [name, value] of Object.entries(message.headers ?? {})) fields.push(headerPrefix + name, value);
  return fields;
}

/**
 * Undefined for an entry that was trimmed or deleted while it waited in a group's pending list.
 * `epoch`: the stream's (redis-stream-epoch.ts), which the message's position carries.
 */
export function fromStreamEntry(
  topic: string,
  [id, fields]: StreamEntry,
  epoch: string | undefined,
): Message | undefined {
  if (!fields) return undefined;
  const message: Message = {
    topic,
    key: undefined,
    value: Buffer.alloc(0),
    headers: {},
    position: withEpoch(id.toString(), epoch),
  };
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i]!.toString();
    const value = fields[i + 1]!;
    if (name === 'v') message.value = value;
    else if (name === 'k') message.key = value.toString();
    else if (name.startsWith(headerPrefix))
      message.headers[name.slice(headerPrefix.length)] = value.toString();
  }
  return message;
}
