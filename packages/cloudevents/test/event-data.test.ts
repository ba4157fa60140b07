import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type CloudEvent, decodeData, encodeData, InvalidCloudEventError } from '../src/index.ts';

const bytes = Buffer.from([0, 1, 2, 250, 255]);
const v1 = { specversion: '1.0', id: '1', type: 't', source: 's' } as const;
const v02 = { specversion: '0.2', id: '1', type: 't', source: 's' } as const;

describe('decodeData', () => {
  it('parses JSON types', () => {
    assert.deepEqual(decodeData(Buffer.from('{"a":[1,2]}'), 'application/json', '1.0'), {
      data: { a: [1, 2] },
    });
    assert.deepEqual(decodeData(Buffer.from('"x"'), 'application/vnd.x+json', '0.2'), { data: 'x' });
  });

  it('names the data and the content type when JSON does not parse', () => {
    assert.throws(
      () => decodeData(Buffer.from('{oops'), 'application/json; charset=utf-8', '1.0'),
      (err: unknown) => {
        assert.ok(err instanceof InvalidCloudEventError);
        assert.equal(err.problems[0]!.attribute, 'data');
        assert.equal(err.problems[0]!.rule, 'json');
        assert.match(
          err.message,
          /the data is not valid JSON although its content type is application\/json/,
        );
        return true;
      },
    );
  });

  it('keeps text as a string', () => {
    assert.deepEqual(decodeData(Buffer.from('héllo'), 'text/plain; charset=utf-8', '1.0'), { data: 'héllo' });
    assert.deepEqual(decodeData(Buffer.from('<a/>'), 'application/xml', '0.2'), { data: '<a/>' });
  });

  it('encodes other bytes as base64: data_base64 in 1.0, data in 0.2', () => {
    assert.deepEqual(decodeData(bytes, 'application/octet-stream', '1.0'), { data_base64: 'AAEC+v8=' });
    assert.deepEqual(decodeData(bytes, undefined, '0.2'), { data: 'AAEC+v8=' });
  });

  it('gives no data for an empty body', () => {
    assert.deepEqual(decodeData(Buffer.alloc(0), 'application/json', '1.0'), {});
  });
});

describe('encodeData', () => {
  it('writes JSON for JSON types and for events without a content type', () => {
    assert.equal(encodeData({ ...v1, data: { a: 1 } }).toString(), '{"a":1}');
    assert.equal(encodeData({ ...v1, data: 'x' }).toString(), '"x"');
    assert.equal(encodeData({ ...v02, contenttype: 'application/json', data: 'x' }).toString(), '"x"');
  });

  it('writes text as it is', () => {
    assert.equal(encodeData({ ...v1, datacontenttype: 'text/plain', data: 'héllo' }).toString(), 'héllo');
  });

  it('decodes base64 binary data', () => {
    assert.deepEqual(encodeData({ ...v1, datacontenttype: 'image/png', data_base64: 'AAEC+v8=' }), bytes);
    assert.deepEqual(encodeData({ ...v02, contenttype: 'image/png', data: 'AAEC+v8=' }), bytes);
  });

  it('writes bytes set by code as they are, and nothing for no data', () => {
    const event: CloudEvent = { ...v1, datacontenttype: 'application/octet-stream', data: bytes };
    assert.deepEqual(encodeData(event), bytes);
    assert.equal(encodeData(v1).length, 0);
  });

  it('round-trips with decodeData for every kind of data and both versions', () => {
    const cases: [string | undefined, Buffer][] = [
      ['application/json', Buffer.from('{"a":1}')],
      ['text/plain', Buffer.from('plain text')],
      ['application/octet-stream', bytes],
      [undefined, bytes],
    ];
    for (const version of ['0.2', '1.0'] as const) {
      for (const [contentType, body] of cases) {
        const attribute = version === '0.2' ? 'contenttype' : 'datacontenttype';
        const event = {
          specversion: version,
          id: '1',
          type: 't',
          source: 's',
          [attribute]: contentType ?? 'application/octet-stream',
          ...decodeData(body, contentType, version),
        } as CloudEvent;
        assert.deepEqual(encodeData(event), body, `${version} ${contentType}`);
      }
    }
  });
});
