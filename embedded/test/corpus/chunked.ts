/** Chunked framing itself: sizes that are not hex, overflow, lie, or never end. */
import { type CorpusCase, chunk, clientErrors, head } from './corpus-case.ts';

const chunkedJson = { 'content-type': 'application/json', 'transfer-encoding': 'chunked' };
const closedOrRefused = [0, ...clientErrors];

function raw(
  name: string,
  path: string,
  body: string,
  statuses: readonly number[] = clientErrors,
): CorpusCase {
  return {
    kind: 'http',
    via: 'edge',
    name: `chunked: ${name}`,
    head: head(`POST ${path} HTTP/1.1`, chunkedJson),
    body: Buffer.from(body),
    statuses,
  };
}

export const chunkedCases: CorpusCase[] = [
  raw('a size that is not hex', '/api/echo/1', 'zz\r\nhello\r\n0\r\n\r\n'),
  raw('a size that overflows 64 bits', '/api/echo/1', 'ffffffffffffffffffff\r\nx\r\n0\r\n\r\n'),
  raw('a negative size', '/_gw/v1/events', '-5\r\nhello\r\n0\r\n\r\n'),
  raw('a size without its line end', '/api/echo/1', `5${' '.repeat(70_000)}`),
  raw('data longer than its size', '/api/echo/1', '2\r\nhello\r\n0\r\n\r\n'),
  raw('an extension of 100 KiB', '/_gw/v1/events', `1;${'e'.repeat(100 * 1024)}\r\nx\r\n0\r\n\r\n`),
  {
    // 7.6 s of event loop and +250 MB (a million 1-byte pieces held) before maxBodyPieces.
    kind: 'http',
    via: 'rest',
    name: 'chunked: 1-byte chunks that never end',
    head: head('POST /api/echo/1 HTTP/1.1', chunkedJson),
    body: chunk('['),
    endless: Buffer.concat(Array.from({ length: 4096 }, () => chunk('1'))),
    statuses: clientErrors,
  },
  {
    kind: 'http',
    via: 'rest',
    name: 'chunked: both content-length and transfer-encoding',
    head: head('POST /api/echo/1 HTTP/1.1', { ...chunkedJson, 'content-length': 5 }),
    body: Buffer.from('5\r\nhello\r\n0\r\n\r\n'),
    statuses: closedOrRefused,
  },
];
