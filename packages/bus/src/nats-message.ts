/**
 * Bus messages ↔ NATS messages. The bus key has no place of its own in a NATS message, so it travels
 * in a header that is stripped again on receive.
 */
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import type { Message, OutgoingMessage, Position } from './bus.ts';

export const KEY_HEADER = 'Gw-Key';

/** Undefined when there is nothing to send, so header-less messages stay header-less on the wire. */
export function toNatsHeaders(message: OutgoingMessage): MsgHdrs | undefined {
  const entries = Object.entries(message.headers ?? {});
  if (entries.length === 0 && message.key === undefined) return undefined;
  const h = natsHeaders();
  for (const [name, value] of entries) h.set(name, value);
  if (message.key !== undefined) h.set(KEY_HEADER, message.key);
  return h;
}

/** The parts every NATS message kind (core Msg, JetStream JsMsg) has. */
interface NatsMessageLike {
  data: Uint8Array;
  headers?: MsgHdrs | undefined;
}

export function fromNatsMessage(topic: string, msg: NatsMessageLike, position: Position): Message {
  const headers: Record<string, string> = {};
  let key: string | undefined;
  for (const [name, values] of msg.headers ?? []) {
    if (name === KEY_HEADER) key = values[0] ?? '';
    else headers[name] = values[0] ?? '';
  }
  // Copied: the client may hand out views of its read buffer.
  return { topic, key, value: Buffer.from(msg.data), headers, position };
}
