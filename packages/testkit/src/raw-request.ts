/**
 * A request written on a socket with the target exactly as given: fetch and node:http would
 * normalise or refuse what the differential path tests send (`/a/../b`, `\\`, raw `%`).
 */
import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  /** The status line and headers, as sent. */
  head: string;
  body: string;
}

/** GET `target` on 127.0.0.1:`port`, one connection, closed after the answer (0: no answer in 10 s). */
export function rawRequest(
  port: number,
  target: string,
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      text += d;
    });
    socket.on('error', () => resolve({ status: 0, head: '', body: '' }));
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const end = text.indexOf('\r\n\r\n');
      resolve({ status, head: text.slice(0, end + 2), body: text.slice(end + 4) });
    });
    socket.setTimeout(10_000, () => socket.destroy());
    let head = `GET ${target} HTTP/1.1\r\nconnection: close\r\n`;
    for (const [name, value] of Object.entries({ host: '127.0.0.1', ...headers }))
      head += `${name}: ${value}\r\n`;
    socket.write(`${head}\r\n`);
  });
}
