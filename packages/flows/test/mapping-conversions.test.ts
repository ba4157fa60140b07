import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppException } from '@gatehouse/functions';
import { runInput } from './mapping-harness.ts';

function body(lines: string[], model: Record<string, unknown> = {}): Record<string, unknown> {
  return runInput(lines, { model }).body as Record<string, unknown>;
}

function failsWith(status: number, message?: string) {
  return (e: unknown) =>
    e instanceof AppException && e.status === status && (message === undefined || e.message === message);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('type suffixes (deprecated syntax, rewritten to plugins)', () => {
  it(':text, :binary, :b64 round trips; a map becomes JSON text', () => {
    const b = body(
      [
        'model.text:binary -> model.bytes',
        'model.bytes:text -> again',
        'model.bytes:b64 -> model.b64',
        'model.b64 -> b64',
        'model.b64:b64 -> model.back',
        'model.back:text -> back',
        'model.map:text -> json',
      ],
      {
        text: 'hello world',
        map: { a: 1, b: 'x' },
      },
    );
    assert.equal(b['again'], 'hello world');
    assert.equal(b['b64'], 'aGVsbG8gd29ybGQ=');
    assert.equal(b['back'], 'hello world');
    assert.equal(b['json'], '{"a":1,"b":"x"}');
  });

  it(':int, :long, :float, :double convert text; non-numeric and null give -1', () => {
    assert.deepEqual(
      body(
        [
          'model.a:int -> a',
          'model.b:long -> b',
          'model.c:float -> c',
          'model.d:double -> d',
          'model.x:int -> x',
          'model.none:int -> n',
          'model.none:double -> nd',
        ],
        {
          a: '12.7',
          b: '9000000000',
          c: '1.5',
          d: '2.25',
          x: 'abc',
        },
      ),
      { a: 12, b: 9000000000, c: 1.5, d: 2.25, x: -1, n: -1, nd: -1 },
    );
  });

  it(':boolean parses text, :! negates, :and/:or combine with another model key', () => {
    assert.deepEqual(
      body(
        [
          'model.t:boolean -> t',
          'model.f:boolean -> f',
          'model.t:! -> not_t',
          'model.yes:and(model.no) -> and',
          'model.yes:or(model.no) -> or',
          '!model.yes -> negated',
        ],
        {
          t: 'TRUE',
          f: 'nope',
          yes: true,
          no: false,
        },
      ),
      { t: true, f: false, not_t: false, and: false, or: true, negated: false },
    );
  });

  it(':boolean(value), :boolean(value=false), :boolean(null=true|false) compare text', () => {
    assert.deepEqual(
      body(
        [
          'model.s:boolean(hello) -> eq',
          'model.s:boolean(hello=false) -> ne',
          'model.n:boolean(3) -> num',
          'model.none:boolean(null=true) -> is_null',
          'model.none:boolean(null=false) -> not_null',
        ],
        {
          s: 'hello',
          n: 3,
        },
      ),
      { eq: true, ne: false, num: true, is_null: true, not_null: false },
    );
  });

  it(':substring(a) and :substring(a, b); out of range fails with 400', () => {
    assert.deepEqual(
      body(['model.s:substring(0, 5) -> a', 'model.s:substring(6) -> b'], { s: 'hello world' }),
      { a: 'hello', b: 'world' },
    );
    assert.throws(
      () => body(['model.s:substring(3, 99) -> x'], { s: 'abc' }),
      failsWith(400, 'Substring indexes are out of bounds: [3, 99]'),
    );
  });

  it(':concat joins model keys and text constants', () => {
    assert.deepEqual(
      body(['model.a:concat(model.space, model.b, text(,), model.c) -> s'], {
        a: 'a',
        space: ' ',
        b: 'b',
        c: 'c',
      }),
      { s: 'a b,c' },
    );
  });

  it(':uuid makes a v4 UUID, :length counts lists, text, bytes, null and others', () => {
    const b = body(
      [
        'model.none:uuid -> id',
        'model.list:length -> list',
        'model.s:length -> s',
        'model.none:length -> none',
        'model.n:length -> n',
      ],
      {
        list: [1, 2, 3],
        s: 'hello',
        n: 1000,
      },
    );
    assert.match(String(b['id']), UUID);
    assert.deepEqual({ ...b, id: 0 }, { id: 0, list: 3, s: 5, none: 0, n: 4 });
  });

  it('an unknown suffix leaves the value unchanged', () => {
    const warnings: string[] = [];
    const { body: b } = runInput(['model.s:unknown -> s'], {
      model: { s: 'same' },
      hooks: { warn: (m) => warnings.push(m) },
    });
    assert.deepEqual(b, { s: 'same' });
    assert.equal(warnings.length, 1);
  });

  it('a null operand makes :text, :binary, :boolean and :! fail with 500; :b64 gives null', () => {
    for (const suffix of ['text', 'binary', 'boolean', '!']) {
      assert.throws(() => body([`model.none:${suffix} -> x`]), failsWith(500), suffix);
    }
    assert.deepEqual(body(['model.none:b64 -> model.x', 'model.x -> x']), {});
  });

  it('invalid Base64 text fails with 400', () => {
    assert.throws(
      () => body(['model.s:b64 -> x'], { s: 'not base64!' }),
      failsWith(400, 'invalid base64 text'),
    );
  });
});

describe('plugins f:name(...)', () => {
  it('arithmetic keeps whole numbers exact and promotes decimals', () => {
    assert.deepEqual(
      body(
        [
          'f:add(int(2), text(3), model.n) -> add',
          'f:subtract(int(10), int(3)) -> sub',
          'f:multiply(int(4), double(2.5)) -> mul',
          'f:div(int(7), int(2)) -> idiv',
          'f:div(double(7.5), int(2)) -> ddiv',
          'f:mod(int(7), int(3)) -> mod',
          'f:increment(model.n) -> inc',
          'f:decrement(model.n) -> dec',
          'f:round(double(2.345), int(2)) -> round',
          'f:round(double(2.5)) -> round0',
        ],
        { n: 5 },
      ),
      { add: 10, sub: 7, mul: 10, idiv: 3, ddiv: 3.75, mod: 1, inc: 6, dec: 4, round: 2.35, round0: 3 },
    );
    assert.throws(
      () => body(['f:div(int(1), int(0)) -> x']),
      failsWith(400, 'Dividing the input: [0] would cause Division By Zero'),
    );
    assert.throws(
      () => body(['f:add(text(a), int(1)) -> x']),
      failsWith(400, 'Cannot convert the object to a number: a'),
    );
  });

  it('logic operators', () => {
    assert.deepEqual(
      body(
        [
          'f:eq(model.a, text(x)) -> eq',
          'f:ne(model.a, text(x)) -> ne',
          'f:gt(int(3), text(2)) -> gt',
          'f:lt(int(3), int(2)) -> lt',
          'f:and(boolean(true), text(true)) -> and',
          'f:or(boolean(false), boolean(false)) -> or',
          'f:not(boolean(false)) -> not',
          'f:isNull(model.none) -> isnull',
          'f:notNull(model.a) -> notnull',
          'f:ternary(model.flag, text(yes), text(no)) -> ternary',
          'f:startsWith(text(Hello World), text(hello)) -> sw',
          'f:endsWith(text(Hello World), text(WORLD)) -> ew',
          'f:includes(text(Hello World), text(lo w)) -> inc',
          'f:includes(model.list, text(b)) -> member',
        ],
        { a: 'x', flag: true, list: ['a', 'b'] },
      ),
      {
        eq: true,
        ne: false,
        gt: true,
        lt: false,
        and: true,
        or: false,
        not: true,
        isnull: true,
        notnull: true,
        ternary: 'yes',
        sw: true,
        ew: true,
        inc: true,
        member: true,
      },
    );
  });

  it('text, collection and list helpers', () => {
    const b = body(
      [
        'f:concat(text(a), text(,), model.n) -> concat',
        'f:substring(text(hello), int(1), int(3)) -> sub',
        'f:defaultValue(model.none, text(fallback)) -> dv',
        'f:removeKey(model.map, text(b)) -> removed',
        'f:uniqueSet(model.dups) -> unique',
        'f:getFirst(model.dups) -> first',
        'f:getLast(model.dups) -> last',
        'f:isEmpty(model.empty) -> empty',
        'f:listOfMap(model.columns) -> rows',
        'f:updateListOfMap(model.rows, model.extra) -> merged',
        'f:length(model.dups) -> len',
      ],
      {
        n: 1,
        map: { a: 1, b: 2 },
        dups: [1, 2, 2, 3],
        empty: [],
        columns: { data: { name: ['a', 'b'], age: [1, 2] } },
        rows: [{ id: 1 }, { id: 2 }],
        extra: { more: { v: ['x', 'y'] } },
      },
    );
    assert.deepEqual(b, {
      concat: 'a,1',
      sub: 'el',
      dv: 'fallback',
      removed: { a: 1 },
      unique: [1, 2, 3],
      first: 1,
      last: 3,
      empty: true,
      rows: [
        { name: 'a', age: 1 },
        { name: 'b', age: 2 },
      ],
      merged: [
        { id: 1, v: 'x' },
        { id: 2, v: 'y' },
      ],
      len: 4,
    });
  });

  it('merges a "__proto__" column of parsed JSON as data, not as the rows\' prototype', () => {
    const extra = JSON.parse('{"more":{"__proto__":[{"isAdmin":true},{"isAdmin":true}]}}');
    const b = body(['f:updateListOfMap(model.rows, model.extra) -> merged'], {
      rows: [{ id: 1 }, { id: 2 }],
      extra,
    });
    const merged = b['merged'] as Array<Record<string, unknown>>;
    assert.equal(merged.length, 2);
    for (const row of merged) {
      assert.equal(Object.getPrototypeOf(row), Object.prototype);
      assert.equal(row['isAdmin'], undefined);
      assert.deepEqual(Object.keys(row), ['id', '__proto__']);
    }
  });

  it('validate returns the value, or fails with Mercury messages; evaluate gives true/false', () => {
    assert.deepEqual(
      body(
        [
          'f:validate(model.user, text(user; String; required; ABC; XYZ)) -> ok',
          'f:validate(model.none, text(user; String; required; evaluate)) -> missing',
          'f:validate(model.n, text(n; Integer; 1; 9; evaluate)) -> in_range',
        ],
        {
          user: 'BOB',
          n: 5,
        },
      ),
      { ok: 'BOB', missing: false, in_range: true },
    );
    assert.throws(
      () => body(['f:validate(model.user, text(user; String; required; CCC; XYZ)) -> x'], { user: 'ABC' }),
      failsWith(400, 'user (ABC) < CCC'),
    );
    assert.throws(
      () => body(['f:validate(model.none, text(user; String; required)) -> x']),
      failsWith(400, 'user is required.'),
    );
    assert.throws(
      () => body(['f:validate(model.n, text(n; Integer; 1; 3)) -> x'], { n: 5 }),
      failsWith(400, 'n (5) > 3'),
    );
    assert.throws(
      () => body(['f:validate(model.n, text(n; Map)) -> x'], { n: 5 }),
      failsWith(400, 'Expect n as Map, Actual: Integer'),
    );
  });

  it('dates: now(ms), parseDate and parseDateTime to ms', () => {
    const before = Date.now();
    const b = body([
      'f:now(text(ms)) -> now',
      'f:parseDate(text(12/25/2026), text(MM/dd/yyyy; ms)) -> d',
      'f:parseDateTime(text(2026-12-25 10:30:00), text(yyyy-MM-dd HH:mm:ss; ms)) -> dt',
    ]);
    assert.ok((b['now'] as number) >= before && (b['now'] as number) <= Date.now());
    assert.equal(b['d'], new Date(2026, 11, 25).getTime());
    assert.equal(b['dt'], new Date(2026, 11, 25, 10, 30, 0).getTime());
  });

  it('setConfig hands the property to the hook; a nested f: argument is null', () => {
    const set: [string, string][] = [];
    const { body: b } = runInput(
      ['f:setConfig(text(app.key), int(5)) -> done', 'f:isNull(f:uuid()) -> nested'],
      {
        hooks: { setConfig: (k, v) => set.push([k, v]) },
      },
    );
    assert.deepEqual(b, { done: true, nested: true });
    assert.deepEqual(set, [['app.key', '5']]);
  });

  it('plugin commas inside parentheses do not split arguments', () => {
    assert.deepEqual(body(['f:concat(text(a,b), text(,)) -> s']), { s: 'a,b,' });
  });
});
