/** multipart/form-data to the example app's `upload: true` endpoint, on both ports. */
import { type CorpusCase, chunk, clientErrors, head, type HttpCase, withLength } from './corpus-case.ts';

const type = 'multipart/form-data; boundary=bnd';
const filePart = '--bnd\r\nContent-Disposition: form-data; name="f"; filename="a"\r\n\r\n';
const emptyField = '--bnd\r\nContent-Disposition: form-data; name="e"\r\n\r\n\r\n';

function bodies(): Array<Omit<HttpCase, 'via' | 'kind'>> {
  const post = 'POST /api/upload HTTP/1.1';
  const fixed = (name: string, body: string | Buffer, contentType = type) => {
    const bytes = Buffer.from(body);
    return {
      name,
      head: withLength(post, { 'content-type': contentType }, bytes),
      body: bytes,
      statuses: clientErrors,
    };
  };
  const chunked = { 'content-type': type, 'transfer-encoding': 'chunked' };
  return [
    // Crashed the process: busboy's error on a file stream nobody listened to.
    fixed('truncated: no closing boundary', `${filePart}hello\r\n`),
    fixed('truncated inside a part header', '--bnd\r\nContent-Disposition: form-da'),
    fixed('ends right after the first boundary', '--bnd'),
    fixed('boundary never appears', 'x'.repeat(4096)),
    fixed('content-type without a boundary', `${filePart}hello\r\n--bnd--\r\n`, 'multipart/form-data'),
    fixed(
      'boundary longer than allowed',
      `${filePart}hello\r\n--bnd--\r\n`,
      `multipart/form-data; boundary=${'b'.repeat(100)}`,
    ),
    fixed('part header of 20 KiB', `--bnd\r\nX-Junk: ${'j'.repeat(20 * 1024)}\r\n\r\nx\r\n--bnd--\r\n`),
    fixed('3,000 header lines in one part', `--bnd\r\n${'a: b\r\n'.repeat(3000)}\r\nx\r\n--bnd--\r\n`),
    fixed('200 files', `${`${filePart}x\r\n`.repeat(200)}--bnd--\r\n`),
    fixed('2,000 empty fields', `${emptyField.repeat(2000)}--bnd--\r\n`),
    {
      // Got no answer and grew memory after the 408: no count limit, only content bytes counted.
      name: '200,000 empty parts, chunked (14 MB)',
      head: head(post, chunked),
      body: chunk(emptyField.repeat(10)),
      endless: chunk(emptyField.repeat(1000)),
      statuses: clientErrors,
    },
    {
      name: 'a file that never ends, chunked',
      head: head(post, chunked),
      body: chunk(filePart),
      endless: chunk('z'.repeat(64 * 1024)),
      statuses: clientErrors,
    },
    {
      name: 'a preamble that never ends, chunked',
      head: head(post, chunked),
      endless: chunk('p'.repeat(64 * 1024)),
      statuses: clientErrors,
    },
  ];
}

export const multipartCases: CorpusCase[] = bodies().flatMap((c) => [
  { kind: 'http', via: 'edge', ...c, name: `multipart, edge: ${c.name}` },
  { kind: 'http', via: 'rest', ...c, name: `multipart, REST port: ${c.name}` },
]);
