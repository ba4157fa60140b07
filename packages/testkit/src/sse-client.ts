/**
 * A small SSE test client on fetch: it keeps every frame (id, event, data) and comment it reads, so
 * tests can assert on exactly what went over the wire, and exposes the response status and headers.
 */

export interface SseFrame {
  id: string | undefined;
  event: string;
  data: string;
  /** The `origin:` field (`gateway` on the hub's own events), when the frame has one. */
  origin?: string;
}

export interface SseConnection {
  status: number;
  headers: Headers;
  /** The body of a non-200 answer. */
  errorBody: string | undefined;
  frames: SseFrame[];
  comments: string[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  /** Frames whose `event` is the given type, data parsed as JSON. */
  events(type?: string): Array<Record<string, unknown>>;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  const abort = new AbortController();
  const res = await fetch(url, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: abort.signal,
  });
  const frames: SseFrame[] = [];
  const comments: string[] = [];
  const conn: SseConnection = {
    status: res.status,
    headers: res.headers,
    errorBody: undefined,
    frames,
    comments,
    ended: Promise.resolve(),
    events: (type) =>
      frames
        .filter((f) => type === undefined || f.event === type)
        .map((f) => JSON.parse(f.data) as Record<string, unknown>),
    close: () => abort.abort(),
  };
  if (res.status !== 200 || !res.body) {
    conn.errorBody = await res.text();
    return conn;
  }
  conn.ended = read(res.body, frames, comments).catch(() => {});
  return conn;
}

async function read(body: ReadableStream<Uint8Array>, frames: SseFrame[], comments: string[]): Promise<void> {
  const decoder = new TextDecoder();
  const parse = parseSseText(frames, comments);
  for await (const chunk of body) parse(decoder.decode(chunk, { stream: true }));
}

/** An incremental SSE parser: feed it text as it arrives; frames and comments are appended. */
export function parseSseText(frames: SseFrame[], comments: string[]): (text: string) => void {
  let buffer = '';
  let current: { id?: string; event?: string; origin?: string; data: string[] } = { data: [] };
  return (text) => {
    buffer += text;
    let nl = buffer.indexOf('\n');
    while (nl >= 0) {
      const line = buffer.slice(0, nl).replace(/\r$/, '');
      buffer = buffer.slice(nl + 1);
      if (line === '') {
        if (current.data.length > 0 || current.event !== undefined) {
          frames.push({
            id: current.id,
            event: current.event ?? 'message',
            data: current.data.join('\n'),
            ...(current.origin !== undefined && { origin: current.origin }),
          });
        }
        current = { data: [] };
      } else if (line.startsWith(':')) comments.push(line.slice(1).trim());
      else {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') current.data.push(value);
        else if (field === 'event') current.event = value;
        else if (field === 'id') current.id = value;
        else if (field === 'origin') current.origin = value;
      }
      nl = buffer.indexOf('\n');
    }
  };
}
