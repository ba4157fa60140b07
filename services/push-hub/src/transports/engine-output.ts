/**
 * The unsent output of one socket.io connection, for the slow-consumer limit (MAX_BUFFERED_BYTES,
 * as for SSE and WebSocket). engine.io keeps what it cannot send yet in its write buffer (a polling
 * client that stops polling, a WebSocket whose previous frames are still unsent); what it handed to
 * its WebSocket is counted by that WebSocket's `bufferedAmount`.
 */
import type { Socket as EngineSocket } from 'engine.io';

interface TransportWebSocket {
  bufferedAmount: number;
  terminate(): void;
}

export class EngineOutput {
  private readonly conn: EngineSocket;
  private readonly maxBuffered: number;
  /** Bytes of frames written to engine.io since it last flushed its write buffer to the transport. */
  private pending = 0;

  constructor(conn: EngineSocket, maxBuffered: number) {
    this.conn = conn;
    this.maxBuffered = maxBuffered;
    conn.on('flush', () => {
      this.pending = 0;
    });
  }

  /** Whether `bytes` more may be written; counts them when so. */
  accepts(bytes: number): boolean {
    if (this.pending + this.inTransport() > this.maxBuffered) return false;
    this.pending += bytes;
    return true;
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
