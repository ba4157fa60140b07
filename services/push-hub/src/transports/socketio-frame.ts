/**
 * One socket.io frame per event, shared by every socket.io connection it goes to. `socket.emit`
 * would parse the CloudEvent JSON (to pass it as an object) and encode it again, per connection;
 * here the socket.io EVENT packet is written around the JSON text as it came (`2[type,event,pos]`,
 * the main namespace needs no prefix), and for the WebSocket transport the WebSocket frame is made
 * once too, as socket.io's own broadcasts do (engine.io's `wsPreEncodedFrame`).
 */
import * as ws from 'ws';
import type { OutgoingEvent } from '../connections/index.ts';
import { oncePerEvent } from './once-per-event.ts';

interface FrameOptions {
  readOnly: boolean;
  mask: boolean;
  rsv1: boolean;
  opcode: number;
  fin: boolean;
}

// ws exports its frame encoder, which its type definitions leave out.
const { Sender } = ws as unknown as { Sender: { frame(data: Buffer, options: FrameOptions): Buffer[] } };

export interface SocketIoFrame {
  /** The socket.io packet (what engine.io sends as a `message`, for polling). */
  packet: string;
  /** The WebSocket frame of the engine.io message `4<packet>`, for WebSocket connections. */
  options: { compress: boolean; wsPreEncodedFrame: Buffer[] };
  /** Bytes the frame takes in a connection's output. */
  bytes: number;
}

/** The socket.io EVENT packet: the type, the CloudEvent and, when it has one, its stream position. */
export function socketIoPacket(e: OutgoingEvent): string {
  const position = e.position === undefined ? '' : `,${JSON.stringify(e.position)}`;
  return `2[${JSON.stringify(e.type)},${e.json}${position}]`;
}

function frame(e: OutgoingEvent): SocketIoFrame {
  const packet = socketIoPacket(e);
  const data = Buffer.from(`4${packet}`);
  const wsPreEncodedFrame = Sender.frame(data, {
    readOnly: false,
    mask: false,
    rsv1: false,
    opcode: 1,
    fin: true,
  });
  return { packet, options: { compress: false, wsPreEncodedFrame }, bytes: data.length };
}

/** Made for the first connection an event goes to, reused by the others. */
export const socketIoFrameOf = oncePerEvent(frame);
