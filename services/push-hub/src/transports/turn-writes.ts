/**
 * Writes made to a socket in one turn of the event loop (one dispatch, a broker batch, the welcome
 * pair of a new connection) leave as one write: the first write of the turn corks the socket, and
 * every socket corked this turn is uncorked on the next tick. A burst of k events to a subscriber
 * then costs one system call instead of k.
 */
import type { Writable } from 'node:stream';

let corked: Writable[] = [];

export function writeInTurn(out: Writable, bytes: Buffer): void {
  if (out.writableCorked === 0) {
    out.cork();
    if (corked.push(out) === 1) process.nextTick(uncorkAll);
  }
  out.write(bytes);
}

function uncorkAll(): void {
  const turn = corked;
  corked = [];
  for (const out of turn) out.uncork();
}
