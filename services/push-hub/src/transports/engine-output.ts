/**
 * The output of one socket.io connection, with its high-water mark (as for SSE and WebSocket: a
 * full connection is written again once drained, catch-up.ts). engine.io keeps what it cannot send yet in its write buffer (a polling
 * client that stops polling, a WebSocket whose previous frames are still unsent); what it handed to
 * its WebSocket is counted by that WebSocket's `bufferedAmount`.
 */
import type { Socket as EngineSocket } from 'engine.io';
import type { SocketIoFrame } from './socketio-frame.ts';
import { WriteDrain } from './write-drain.ts';

interface TransportWebSocket {
  bufferedAmount: number;
  terminate(): void;
}

export class EngineOutput {
  private readonly conn: EngineSocket;
  private readonly highWater: number;
  /** Bytes of frames written to engine.io since it last flushed its write buffer to the transport. */
  private pending = 0;
  private drain: WriteDrain | undefined;

  constructor(conn: EngineSocket, highWater: number) {
    this.conn = conn;
    this.highWater = highWater;
    conn.on('flush', () => {
      this.pending = 0;
    });
  }

  /** Writes the frame; false when the unsent output has reached the high-water mark. */
  write(frame: SocketIoFrame): boolean {
    const full = this.pending + this.inTransport() + frame.bytes >= this.highWater;
    this.pending += frame.bytes;
    if (!full) {
      this.conn.write(frame.packet, frame.options);
      return true;
    }
    // engine.io calls back once the transport has sent the packet (a poll answered, a frame written).
    this.drain ??= new WriteDrain();
    this.conn.write(frame.packet, frame.options, this.drain.written());
    return false;
  }

  /** Bytes written and not sent yet: in engine.io's write buffer and in its WebSocket's. */
  queued(): number {
    return this.pending + this.inTransport();
  }

  whenDrained(ready: () => void): void {
    if (this.drain) this.drain.whenDrained(ready, this.pending + this.inTransport());
    else setImmediate(ready);
  }

  /**
   * Closes the connection at once, dropping what it has not sent: a slow consumer does not read,
   * so a closing handshake would keep those bytes until it timed out.
   */
  destroy(): void {
    this.pending = 0;
    this.webSocket()?.terminate();
    this.conn.close(true);
  }

  private inTransport(): number {
    return this.webSocket()?.bufferedAmount ?? 0;
  }

  private webSocket(): TransportWebSocket | undefined {
    const transport = this.conn.transport as unknown as { name: string; socket?: TransportWebSocket };
    return transport.name === 'websocket' ? transport.socket : undefined;
  }
}
