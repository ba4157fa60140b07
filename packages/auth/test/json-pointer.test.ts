import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileJsonPointer, JsonPointerError, parseJsonPointer, readJsonPointer } from '../src/index.ts';

// The example document of RFC 6901 §5.
const rfcDocument = {
  foo: ['bar', 'baz'],
  '': 0,
  'a/b': 1,
  'c%d': 2,
  'e^f': 3,
  'g|h': 4,
  'i\\j': 5,
  'k"l': 6,
  ' ': 7,
  'm~n': 8,
};

describe('JSON pointer', () => {
  it('reads every example of RFC 6901 §5', () => {
    const expected: [string, unknown][] = [
      ['', rfcDocument],
      ['/foo', ['bar', 'baz']],
      ['/foo/0', 'bar'],
      ['/', 0],
      ['/a~1b', 1],
      ['/c%d', 2],
      ['/e^f', 3],
      ['/g|h', 4],
      ['/i\\j', 5],
      ['/k"l', 6],
      ['/ ', 7],
      ['/m~0n', 8],
    ];
    for (const [pointer, value] of expected)
      assert.deepEqual(readJsonPointer(rfcDocument, pointer), value, pointer);
  });

  it('unescapes ~1 before ~0, so ~01 is a literal ~1', () => {
    assert.deepEqual(parseJsonPointer('/~01/~10'), ['~1', '/0']);
    assert.equal(readJsonPointer({ '~1': 'tilde-one' }, '/~01'), 'tilde-one');
  });

  it('reads nested objects and array elements', () => {
    const claims = { user: { roles: ['admin', { name: 'ops' }] }, n: 0, f: false, z: null };
    assert.equal(readJsonPointer(claims, '/user/roles/1/name'), 'ops');
    assert.equal(readJsonPointer(claims, '/n'), 0);
    assert.equal(readJsonPointer(claims, '/f'), false);
    assert.equal(readJsonPointer(claims, '/z'), null);
  });

  it('returns undefined for a missing path', () => {
    const doc = { foo: ['bar'], s: 'text', o: {} };
    for (const pointer of [
      '/nope',
      '/foo/1',
      '/foo/-',
      '/foo/01',
      '/foo/x',
      '/foo/0/deeper',
      '/s/0',
      '/o/a/b',
      '/s/length',
    ])
      assert.equal(readJsonPointer(doc, pointer), undefined, pointer);
    assert.equal(readJsonPointer(undefined, '/a'), undefined);
    assert.equal(readJsonPointer(null, '/a'), undefined);
  });

  it('never reads inherited properties', () => {
    for (const pointer of ['/constructor', '/__proto__', '/toString', '/hasOwnProperty'])
      assert.equal(readJsonPointer({}, pointer), undefined, pointer);
    assert.equal(readJsonPointer([], '/length'), undefined);
  });

  it('refuses pointers that do not parse', () => {
    assert.throws(() => parseJsonPointer('jti'), JsonPointerError);
    assert.throws(() => parseJsonPointer('/a~2b'), JsonPointerError);
    assert.throws(() => parseJsonPointer('/a~'), JsonPointerError);
    assert.throws(() => compileJsonPointer('username'), /must start with "\/"/);
  });

  it('compiles a pointer once for many documents', () => {
    const read = compileJsonPointer('/a~1b/0');
    assert.equal(read({ 'a/b': ['x'] }), 'x');
    assert.equal(read({ 'a/b': [] }), undefined);
  });
});
