/**
 * Coalesces what one turn of the event loop writes to a socket (a broker batch of events, the
 * welcome pair of a new connection): the first write of the turn goes out at once, so a single
 * event waits for nothing; a second one corks the socket, and the rest of the turn's writes leave
 * with it as one write on the next tick. A burst of k events to a subscriber costs two system calls
 * instead of k.
 */
import type { Writable } from 'node:stream';

/** Where a writer notes the turn it last wrote in (a field of the connection: no object of its own). */
export interface TurnMark {
  writtenInTurn: number;
}

let turn = 1;
let turnEndScheduled = false;
let corked: Writable[] = [];

/**
 * `bytes`: a Buffer, or text written in `encoding` (UTF-8 when none). No encoding is passed with a
 * Buffer: node then skips checking the encoding's name on every delivery.
 */
export function writeInTurn(
  out: Writable,
  bytes: Buffer | string,
  mark: TurnMark,
  encoding?: 'utf8' | 'latin1',
): void {
  if (!turnEndScheduled) {
    turnEndScheduled = true;
    process.nextTick(endTurn);
  }
  if (mark.writtenInTurn !== turn) mark.writtenInTurn = turn;
  else if (out.writableCorked === 0) {
    out.cork();
    corked.push(out);
  }
  if (encoding === undefined) out.write(bytes);
  else out.write(bytes, encoding);
}

function endTurn(): void {
  turn++;
  turnEndScheduled = false;
  const written = corked;
  corked = [];
  for (const out of written) out.uncork();
}
