/** A connection that keeps what the hub sends it, for tests that drive the hub directly. */
import type { Connection } from '../src/connections/connection.ts';
import type { OutgoingEvent } from '../src/connections/gateway-events.ts';

export class RecordingConnection implements Connection {
  readonly transport = 'sse' as const;
  sessionId: string | undefined;
  readonly id = crypto.randomUUID();
  readonly sent: OutgoingEvent[] = [];
  get eventsWritten(): number {
    return this.sent.length;
  }
  send(e: OutgoingEvent): boolean {
    this.sent.push(e);
    return true;
  }
  queuedBytes(): number {
    return 0;
  }
  whenDrained(ready: () => void): void {
    setImmediate(ready);
  }
  close(): void {}
  /** The CloudEvents of type `tick` it got, in order. */
  ticks(): Array<{ id: string; data: { n?: number } }> {
    return this.sent.filter((e) => e.type === 'tick').map((e) => JSON.parse(e.json));
  }
  ids(): string[] {
    return this.ticks().map((e) => e.id);
  }
  numbers(): number[] {
    return this.ticks().map((e) => e.data.n as number);
  }
}
