import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  formatTraceState,
  getTraceStateMember,
  isValidTraceStateKey,
  isValidTraceStateValue,
  parseTraceState,
  setTraceStateMember,
  type TraceState,
} from '../src/index.ts';

const members = (n: number, prefix = 'k') =>
  Array.from({ length: n }, (_, i) => `${prefix}${i}=v${i}`).join(',');

describe('parseTraceState', () => {
  it('parses members in order', () => {
    assert.deepEqual(parseTraceState('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE'), [
      { key: 'rojo', value: '00f067aa0ba902b7' },
      { key: 'congo', value: 't61rcWkgMzE' },
    ]);
  });

  it('ignores optional whitespace and empty members', () => {
    assert.deepEqual(parseTraceState('foo=1 \t , \t bar=2,\t \tbaz=3'), [
      { key: 'foo', value: '1' },
      { key: 'bar', value: '2' },
      { key: 'baz', value: '3' },
    ]);
    assert.deepEqual(parseTraceState(' , foo=1,,  ,'), [{ key: 'foo', value: '1' }]);
    assert.deepEqual(parseTraceState(''), []);
    assert.deepEqual(parseTraceState(undefined), []);
  });

  it('keeps leading spaces inside a value', () => {
    assert.deepEqual(parseTraceState('foo= a b'), [{ key: 'foo', value: ' a b' }]);
  });

  it('combines several header fields in order', () => {
    assert.deepEqual(
      formatTraceState(parseTraceState(['foo=1,bar=2', '', 'rojo=1,congo=2', 'baz=3'])),
      'foo=1,bar=2,rojo=1,congo=2,baz=3',
    );
  });

  it('accepts every allowed key and value character, simple and multi-tenant keys', () => {
    const simpleKey = 'abcdefghijklmnopqrstuvwxyz0123456789_-*/';
    const tenantKey = `${simpleKey}@a-z0-9_-*/`;
    const chars = (from: number, to: number) =>
      String.fromCharCode(...Array.from({ length: to - from + 1 }, (_, i) => from + i));
    const value = chars(0x20, 0x2b) + chars(0x2d, 0x3c) + chars(0x3e, 0x7e);
    assert.deepEqual(parseTraceState(`${simpleKey}=${value}`), [{ key: simpleKey, value }]);
    assert.deepEqual(parseTraceState(`${tenantKey}=${value}`), [{ key: tenantKey, value }]);
    assert.deepEqual(parseTraceState('0tenant@system=x'), [{ key: '0tenant@system', value: 'x' }]);
  });

  it('ignores invalid members and keeps the valid ones', () => {
    const invalid = [
      'foo =1',
      'FOO=1',
      'foo.bar=1',
      '0simple=1',
      'foo@=1',
      '@foo=1',
      'foo@@bar=1',
      'foo@bar@baz=1',
      'foo@0sys=1',
      'foo@abcdefghijklmno=1',
      `${'a'.repeat(257)}=1`,
      'novalue',
      'foo=',
      'foo=a=b',
      'foo=tab\there',
      'foo=é',
      `foo=${'v'.repeat(257)}`,
    ];
    for (const member of invalid) {
      assert.deepEqual(parseTraceState(`${member},ok=1`), [{ key: 'ok', value: '1' }], member);
    }
  });

  it('allows 32 members and discards a header with more', () => {
    assert.equal(parseTraceState(members(32)).length, 32);
    assert.deepEqual(parseTraceState(members(33)), []);
  });

  it('discards a header with a key given twice', () => {
    assert.deepEqual(parseTraceState('foo=1,foo=1'), []);
    assert.deepEqual(parseTraceState('foo=1,bar=2,foo=2'), []);
    assert.deepEqual(parseTraceState(['foo=1', 'foo=2']), []);
  });
});

describe('formatTraceState', () => {
  it('writes members comma-separated, and nothing for an empty state', () => {
    const state: TraceState = [
      { key: 'rojo', value: '00f067aa0ba902b7' },
      { key: 'congo', value: 't61rcWkgMzE' },
    ];
    assert.equal(formatTraceState(state), 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
    assert.equal(formatTraceState([]), '');
  });

  it('shortens past the limit by dropping long members first, then from the end', () => {
    const long = { key: 'long', value: 'x'.repeat(200) };
    const state: TraceState = [
      { key: 'a', value: 'x'.repeat(100) },
      long,
      { key: 'b', value: 'y'.repeat(100) },
      { key: 'c', value: 'z'.repeat(100) },
    ];
    assert.equal(formatTraceState(state, 400).includes('long='), false, 'the long member goes first');
    assert.equal(
      formatTraceState(state, 400),
      state
        .filter((m) => m !== long)
        .map((m) => `${m.key}=${m.value}`)
        .join(','),
    );
    assert.equal(formatTraceState(state, 250), `a=${'x'.repeat(100)},b=${'y'.repeat(100)}`);
    assert.ok(formatTraceState(state).length <= 512);
    assert.equal(formatTraceState(state, 2000).includes('long='), true, 'nothing dropped when it fits');
  });
});

describe('setTraceStateMember', () => {
  it('adds a new member at the front, moves an updated one there, and keeps at most 32', () => {
    const state = parseTraceState('rojo=1,congo=2');
    assert.equal(formatTraceState(setTraceStateMember(state, 'gw', 'a')), 'gw=a,rojo=1,congo=2');
    assert.equal(formatTraceState(setTraceStateMember(state, 'congo', '3')), 'congo=3,rojo=1');
    assert.equal(formatTraceState(state), 'rojo=1,congo=2', 'the original is unchanged');
    const full = setTraceStateMember(parseTraceState(members(32)), 'gw', 'a');
    assert.equal(full.length, 32);
    assert.equal(full[0]!.key, 'gw');
    assert.equal(getTraceStateMember(full, 'k31'), undefined, 'the last member dropped out');
    assert.equal(getTraceStateMember(full, 'k30'), 'v30');
  });

  it('refuses invalid keys and values', () => {
    assert.throws(() => setTraceStateMember([], 'Bad', 'x'), /invalid tracestate key/);
    assert.throws(() => setTraceStateMember([], 'ok', 'a,b'), /invalid tracestate value/);
    assert.equal(isValidTraceStateKey('vendor@sys'), true);
    assert.equal(isValidTraceStateValue('trailing '), false);
  });
});
