import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AppException } from '@gatehouse/functions';
import {
  deepCopy,
  getPath,
  lookup,
  NOT_FOUND,
  pathExists,
  removePath,
  setPath,
} from '../src/mapping/data-path.ts';
import { readJsonPath } from '../src/mapping/json-path.ts';

describe('data paths', () => {
  it('reads dot and bracket paths, nested lists, and a whole-path key first', () => {
    const root = { a: { b: [{ c: 1 }, [10, [20, 21]]] }, 'x.y': 'literal', x: { y: 'nested' } };
    assert.equal(getPath(root, 'a.b[0].c'), 1);
    assert.equal(getPath(root, 'a.b[1][1][0]'), 20);
    assert.equal(getPath(root, 'x.y'), 'literal');
    assert.equal(getPath(root, 'a.b[5]'), null);
    assert.equal(lookup(root, 'a.missing'), NOT_FOUND);
  });

  it('tells a stored null from a missing key', () => {
    const root = { a: { n: null } };
    assert.equal(pathExists(root, 'a.n'), true);
    assert.equal(pathExists(root, 'a.m'), false);
  });

  it('creates maps and lists on write, pads lists with nulls, appends with []', () => {
    const root: Record<string, unknown> = {};
    setPath(root, 'a.list[2].b', 'x');
    assert.deepEqual(root, { a: { list: [null, null, { b: 'x' }] } });
    setPath(root, 'items[]', 1);
    setPath(root, 'items[]', 2);
    assert.deepEqual(getPath(root, 'items'), [1, 2]);
    setPath(root, 'grid[1][1]', 'y');
    assert.deepEqual(getPath(root, 'grid'), [null, [null, 'y']]);
  });

  it('removes a map key and nulls a list element', () => {
    const root: Record<string, unknown> = { a: { k: 1, list: [1, 2] } };
    removePath(root, 'a.k');
    removePath(root, 'a.list[0]');
    removePath(root, 'a.none');
    assert.deepEqual(root, { a: { list: [null, 2] } });
  });

  it('reads back what it wrote, for any path of keys and indexes (property)', () => {
    const key = fc.stringMatching(/^[a-z][a-z0-9_-]{0,5}$/);
    const segment = fc.record({ key, indexes: fc.array(fc.nat(4), { maxLength: 2 }) });
    const path = fc.array(segment, { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(path, fc.jsonValue(), (segments, value) => {
        const text = segments.map((s) => s.key + s.indexes.map((i) => `[${i}]`).join('')).join('.');
        const root: Record<string, unknown> = {};
        setPath(root, text, value);
        assert.deepEqual(getPath(root, text), value);
        assert.equal(pathExists(root, text), true);
        removePath(root, text);
        const last = segments.at(-1)!;
        // a removed map key is gone; a removed list element reads as null
        if (last.indexes.length === 0) assert.equal(pathExists(root, text), false);
        else assert.equal(getPath(root, text), null);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses __proto__, constructor and prototype segments when writing, reading or removing', () => {
    const refused = (segment: string) => (err: unknown) =>
      err instanceof AppException && err.status === 400 && err.message.includes(`'${segment}'`);
    for (const path of [
      'model.__proto__.polluted',
      '__proto__.polluted',
      'model.constructor.prototype.polluted',
      'model.list[0].__proto__.polluted',
      'model.x.prototype',
      '__proto__',
    ]) {
      const segment = ['__proto__', 'constructor', 'prototype'].find((s) => path.includes(s))!;
      assert.throws(() => setPath({ model: {} }, path, 'yes'), refused(segment), path);
      assert.throws(() => lookup({ model: {} }, path), refused(segment), path);
      assert.throws(() => removePath({ model: {} }, path), refused(segment), path);
    }
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
    // A segment that only contains one of the names is an ordinary key.
    const root: Record<string, unknown> = {};
    setPath(root, 'model.my_prototype.constructors', 1);
    assert.equal(getPath(root, 'model.my_prototype.constructors'), 1);
  });

  it('refuses those segments in JSON paths too', () => {
    for (const expression of ['$.model.__proto__', "$['constructor']", '$..prototype'])
      assert.throws(() => readJsonPath({ model: {} }, expression), AppException, expression);
  });

  it('copies a "__proto__" key of parsed JSON as data, not as the copy\'s prototype', () => {
    const parsed = JSON.parse('{"__proto__":{"polluted":"yes"},"list":[{"__proto__":{"isAdmin":true}}]}');
    const copy = deepCopy(parsed) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(copy), Object.prototype);
    assert.equal(copy['polluted'], undefined);
    assert.deepEqual(Object.keys(copy), ['__proto__', 'list']);
    const item = (copy['list'] as Array<Record<string, unknown>>)[0]!;
    assert.equal(Object.getPrototypeOf(item), Object.prototype);
    assert.equal(item['isAdmin'], undefined);
    assert.equal(JSON.stringify(copy), JSON.stringify(parsed));
  });
});
