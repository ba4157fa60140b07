/**
 * Finds the publish stamp of each event in the raw bytes of one connection, whatever the framing
 * (SSE text, chunked encoding, unmasked WebSocket text frames): the number after `"sentAt":`. Nothing
 * else is parsed. TCP may split a frame anywhere, so an unfinished marker or number at the end of a
 * chunk is kept and completed by the next one.
 */

export const STAMP_FIELD = 'sentAt';
const marker = Buffer.from(`"${STAMP_FIELD}":`);

export class StampScanner {
  private tail: Buffer | undefined;

  scan(chunk: Buffer, onStamp: (stamp: number) => void): void {
    const data = this.tail ? Buffer.concat([this.tail, chunk]) : chunk;
    this.tail = undefined;
    let from = 0;
    for (;;) {
      const at = data.indexOf(marker, from);
      if (at < 0) break;
      const start = at + marker.length;
      let end = start;
      while (end < data.length && isNumberByte(data[end]!)) end++;
      if (end === data.length) {
        this.tail = Buffer.from(data.subarray(at));
        return;
      }
      onStamp(Number(data.toString('latin1', start, end)));
      from = end;
    }
    const partial = partialMarkerAtEnd(data, from);
    if (partial > 0) this.tail = Buffer.from(data.subarray(data.length - partial));
  }
}

function isNumberByte(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || b === 0x2e || b === 0x2d || b === 0x65 || b === 0x2b; // 0-9 . - e +
}

/** Length of the longest proper prefix of the marker that the data (after `from`) ends with. */
function partialMarkerAtEnd(data: Buffer, from: number): number {
  for (let k = Math.min(marker.length - 1, data.length - from); k > 0; k--) {
    if (data.subarray(data.length - k).equals(marker.subarray(0, k))) return k;
  }
  return 0;
}
