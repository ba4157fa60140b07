/**
 * The event-stream format, read incrementally as the spec says: lines end with CRLF, LF or CR;
 * `data:` lines join with LF; `id:`, `retry:` and the gateway's `origin:` fields; `:` comments; a
 * blank line dispatches.
 */
export interface SseMessage {
  id: string | undefined;
  event: string;
  data: string;
  /** The `origin:` field, which the gateway writes as `gateway` on its own events only. */
  origin?: string;
}

/** Longest line kept while it has no end yet: a stream that never ends its line is dropped. */
export const MAX_SSE_LINE = 8 * 1024 * 1024;

export class SseParser {
  private buffer = '';
  private id: string | undefined;
  private event = '';
  private origin: string | undefined;
  private data: string[] = [];
  private afterCr = false;
  /** The last `retry:` the stream sent (ms). */
  retryMs: number | undefined;

  /** Feeds text; returns the messages it completed. */
  push(text: string): SseMessage[] {
    // A CR that ended the last chunk already ended its line: an LF right after it is the same end.
    const chunk = this.afterCr && text.startsWith('\n') ? text.slice(1) : text;
    this.afterCr = chunk.endsWith('\r');
    this.buffer += chunk;
    const out: SseMessage[] = [];
    const lines = this.buffer.split(/\r\n|\r|\n/);
    // The last piece has no line end yet.
    this.buffer = lines.pop() ?? '';
    if (this.buffer.length > MAX_SSE_LINE)
      throw new Error(`an SSE line longer than ${MAX_SSE_LINE} characters`);
    for (const line of lines) {
      if (line === '') {
        if (this.data.length > 0)
          out.push({
            id: this.id,
            event: this.event || 'message',
            data: this.data.join('\n'),
            ...(this.origin !== undefined && { origin: this.origin }),
          });
        this.id = undefined;
        this.event = '';
        this.origin = undefined;
        this.data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') this.data.push(value);
      else if (field === 'event') this.event = value;
      else if (field === 'origin') this.origin = value;
      else if (field === 'id' && !value.includes('\0')) this.id = value;
      else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
    }
    return out;
  }
}
