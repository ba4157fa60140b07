/** Frames a client is not allowed to send, to the hub's WebSocket and socket.io transports. */
import { type CorpusCase, clientErrors } from './corpus-case.ts';

const mask = Buffer.from([1, 2, 3, 4]);

/** A client frame; `declared` overrides the payload length written in the header. */
export function frame(
  opcode: number,
  payload: Buffer,
  options: { fin?: boolean; masked?: boolean; declared?: number } = {},
): Buffer {
  const { fin = true, masked = true } = options;
  const length = options.declared ?? payload.length;
  const first = (fin ? 0x80 : 0) | opcode;
  const maskBit = masked ? 0x80 : 0;
  let header: Buffer;
  if (length < 126) header = Buffer.from([first, maskBit | length]);
  else if (length < 65_536) {
    header = Buffer.alloc(4);
    header.writeUInt8(first, 0);
    header.writeUInt8(maskBit | 126, 1);
    header.writeUInt16BE(length, 2);
  } else {
    header = Buffer.alloc(10);
    header.writeUInt8(first, 0);
    header.writeUInt8(maskBit | 127, 1);
    header.writeBigUInt64BE(BigInt(length), 2);
  }
  if (!masked) return Buffer.concat([header, payload]);
  const body = Buffer.from(payload);
  for (let i = 0; i < body.length; i++) body[i]! ^= mask[i % 4]!;
  return Buffer.concat([header, mask, body]);
}

const ws = '/_gw/v1/connection/ws';
const socketIoWs = '/_gw/v1/socket.io/?EIO=4&transport=websocket';
const kib = (n: number) => Buffer.alloc(n * 1024, 0x61);

export const websocketCases: CorpusCase[] = [
  {
    kind: 'ws',
    name: 'WebSocket: a frame declaring 1 GiB',
    path: ws,
    frames: [frame(1, Buffer.alloc(0), { declared: 2 ** 30 })],
    closeCodes: [1009],
  },
  {
    kind: 'ws',
    name: 'WebSocket: a 1 MiB message',
    path: ws,
    frames: [frame(1, kib(1024))],
    closeCodes: [1009],
  },
  {
    kind: 'ws',
    name: 'WebSocket: 200 fragments of 1 KiB',
    path: ws,
    frames: [
      frame(1, kib(1), { fin: false }),
      ...Array.from({ length: 199 }, () => frame(0, kib(1), { fin: false })),
    ],
    closeCodes: [1009],
  },
  {
    kind: 'ws',
    name: 'WebSocket: a continuation without a start',
    path: ws,
    frames: [frame(0, kib(1))],
    closeCodes: [1002],
  },
  {
    kind: 'ws',
    name: 'WebSocket: an unmasked frame',
    path: ws,
    frames: [frame(1, Buffer.from('hi'), { masked: false })],
    closeCodes: [1002],
  },
  {
    kind: 'ws',
    name: 'WebSocket: a reserved opcode',
    path: ws,
    frames: [frame(3, Buffer.from('hi'))],
    closeCodes: [1002],
  },
  {
    kind: 'ws',
    name: 'WebSocket: a fragmented ping',
    path: ws,
    frames: [frame(9, Buffer.from('hi'), { fin: false })],
    closeCodes: [1002],
  },
  {
    kind: 'ws',
    name: 'WebSocket: invalid UTF-8 text',
    path: ws,
    frames: [frame(1, Buffer.from([0xc3, 0x28]))],
    closeCodes: [1007],
  },
  {
    kind: 'ws',
    name: 'WebSocket: a message (the hub takes none)',
    path: ws,
    frames: [frame(1, Buffer.from('hi'))],
    closeCodes: [1003],
  },
  {
    kind: 'ws',
    name: 'socket.io over WebSocket: a 512 KiB packet',
    path: socketIoWs,
    frames: [frame(1, Buffer.concat([Buffer.from('40'), kib(512)]))],
    closeCodes: [1009],
  },
  {
    kind: 'socketio-polling',
    name: 'socket.io polling: a 512 KiB packet',
    body: Buffer.concat([Buffer.from('40'), kib(512)]),
    statuses: clientErrors,
  },
  { kind: 'socketio-polling', name: 'socket.io polling: 5 MiB', body: kib(5 * 1024), statuses: clientErrors },
];
