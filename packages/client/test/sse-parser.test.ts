import assert from 'node:assert/strict';
import { it } from 'node:test';
import { MAX_SSE_LINE, SseParser } from '../src/transports/sse-parser.ts';

it('reads fields across chunks and every line end, joins data lines, skips comments', () => {
  const parser = new SseParser();
  const text =
    ': heartbeat\n\nid: 4-1\nevent: a\ndata: {"x":\ndata: 1}\n\nid:5\r\nevent:b\r\ndata:two\r\n\r\nretry: 250\r\rdata: three\r\r';
  const messages = [...text].flatMap((ch) => parser.push(ch));
  assert.deepEqual(messages, [
    { id: '4-1', event: 'a', data: '{"x":\n1}' },
    { id: '5', event: 'b', data: 'two' },
    { id: undefined, event: 'message', data: 'three' },
  ]);
  assert.equal(parser.retryMs, 250);
});

it('takes a CR at the end of a chunk and the LF that starts the next as one line end', () => {
  const parser = new SseParser();
  assert.deepEqual(parser.push('data: a\r'), []);
  assert.deepEqual(parser.push('\ndata: b\r\n\r\n'), [{ id: undefined, event: 'message', data: 'a\nb' }]);
});

it('refuses a line that never ends beyond MAX_SSE_LINE', () => {
  const parser = new SseParser();
  const chunk = 'x'.repeat(1024 * 1024);
  assert.throws(() => {
    for (let i = 0; i <= MAX_SSE_LINE / chunk.length; i++) parser.push(chunk);
  }, /longer than/);
});

it("keeps the gateway's origin field per message", () => {
  const parser = new SseParser();
  assert.deepEqual(
    parser.push('id: 1\nevent: gw.x\norigin: gateway\ndata: {}\n\nid: 2\nevent: y\ndata: {}\n\n'),
    [
      { id: '1', event: 'gw.x', data: '{}', origin: 'gateway' },
      { id: '2', event: 'y', data: '{}' },
    ],
  );
});
