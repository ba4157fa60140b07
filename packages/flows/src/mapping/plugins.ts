/**
 * Mercury's built-in simple plugins, called from a mapping as `f:name(arg, ...)`. Each behaves as
 * its Mercury class (services/plugins/**): the same argument rules and the same error texts.
 * An argument error is an AppException(400) (Java's IllegalArgumentException); a null where Mercury
 * would dereference it is an AppException(500) (Java's NullPointerException).
 */
import { randomUUID } from 'node:crypto';
import { AppException } from '@gatehouse/functions';
import { type DataMap, deepCopy, isDataMap, setOwn, setPath } from './data-path.ts';
import { javaText, javaTypeName, str2double, str2int, str2long } from './java-text.ts';
import { isoZoned, type ZonedTime, zonedTime } from './zoned-time.ts';

export type Plugin = (args: unknown[], context: PluginContext) => unknown;

export interface PluginContext {
  readonly setConfig?: (key: string, value: string) => void;
}

export function badArgument(message: string): AppException {
  return new AppException(400, message);
}

function nullValue(what: string): AppException {
  return new AppException(500, `${what} of a null value`);
}

// ---- numbers (SimplePluginUtils: whole numbers stay exact, any decimal promotes to double) ----

interface Num {
  readonly value: number;
  readonly double: boolean;
}

function promote(o: unknown): Num {
  if (typeof o === 'number') return { value: o, double: !Number.isInteger(o) };
  if (typeof o === 'string') {
    const text = o.trim();
    if (/^[+-]?\d+$/.test(text)) return { value: Number.parseInt(text, 10), double: false };
    if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return { value: Number(text), double: true };
  }
  throw badArgument(`Cannot convert the object to a number: ${javaText(o)}`);
}

function reduce(input: unknown[], op: (a: number, b: number, whole: boolean) => number): number {
  const numbers = input.map(promote);
  const whole = !numbers.some((n) => n.double);
  let total = numbers[0]!.value;
  for (let i = 1; i < numbers.length; i++) total = op(total, numbers[i]!.value, whole);
  return total;
}

function divideByZeroCheck(values: unknown[]): void {
  if (values.map(promote).some((n) => n.value === 0)) {
    throw badArgument(
      `Dividing the input: [${values.map(javaText).join(', ')}] would cause Division By Zero`,
    );
  }
}

function atLeast(input: unknown[], n: number, message: string): void {
  if (input.length < n) throw badArgument(message);
}

// ---- type conversions (TypeConversionUtils) ----

export function textValue(value: unknown): string {
  if (value === null || value === undefined) throw nullValue('text conversion');
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (isDataMap(value)) return JSON.stringify(value);
  return javaText(value);
}

export function binaryValue(value: unknown): Uint8Array {
  if (value === null || value === undefined) throw nullValue('binary conversion');
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  if (isDataMap(value)) return Buffer.from(JSON.stringify(value), 'utf8');
  return Buffer.from(javaText(value), 'utf8');
}

export function booleanValue(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') return value.toLowerCase() === 'true';
  if (value === null || value === undefined) throw nullValue('boolean conversion');
  throw badArgument(`Cannot convert input to boolean: ${javaText(value)}`);
}

export function lengthOf(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (value instanceof Uint8Array) return value.length;
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return value.length;
  return javaText(value).length;
}

const BASE64 = /^[A-Za-z0-9+/\r\n]*={0,2}$/;

export function b64Value(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (typeof value === 'string') {
    if (!BASE64.test(value) || value.replace(/[\r\n]/g, '').length % 4 === 1) {
      throw badArgument('invalid base64 text');
    }
    return new Uint8Array(Buffer.from(value, 'base64'));
  }
  return value;
}

const intValue = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : str2int(javaText(v)));
const longValue = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : str2long(javaText(v)));
const doubleValue = (v: unknown) => (typeof v === 'number' ? v : str2double(javaText(v)));

/** One value → its conversion; several → the list of conversions (Mercury's type plugins). */
function converter(name: string, convert: (v: unknown) => unknown): Plugin {
  return (input) => {
    if (input.length === 0) throw badArgument(`Input is required for ${name} conversion`);
    return input.length === 1 ? convert(input[0]) : input.map(convert);
  };
}

// ---- equality with Java's Objects.equals on JSON-like values ----

function deepEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Uint8Array || b instanceof Uint8Array) return false; // Java arrays compare by reference
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => deepEquals(v, b[i]));
  }
  if (isDataMap(a) && isDataMap(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((k) => Object.hasOwn(b, k) && deepEquals(a[k], b[k]))
    );
  }
  return false;
}

// ---- dates ----

function isoTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

/** Utility.getLocalTimestamp: local date-time as `yyyy-MM-dd HH:mm:ss.SSS` (Java's LocalDateTime text). */
function localTimestamp(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const base = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
  const seconds = d.getSeconds() === 0 && d.getMilliseconds() === 0 ? '' : `:${p(d.getSeconds())}`;
  const millis = d.getMilliseconds() === 0 ? '' : `.${p(d.getMilliseconds(), 3)}`;
  return base + seconds + millis;
}

function timestampAs(ms: number, type: string): unknown {
  switch (type.toLowerCase()) {
    case 'local':
      return localTimestamp(ms);
    case 'ms':
      return ms;
    case 'iso':
      return isoTimestamp(ms);
    default:
      throw badArgument('Supported types are: iso, local, ms');
  }
}

/** Java DateTimeFormatter letters used by date patterns: y M d H h m s S a (others stay as written). */
function formatDate(pattern: string, t: ZonedTime): string {
  const p = (n: number, w: number) => String(n).padStart(w, '0');
  return pattern.replace(/y+|M+|d+|H+|h+|m+|s+|S+|a/g, (token) => {
    const w = token.length;
    switch (token[0]) {
      case 'y':
        return w === 2 ? p(t.year % 100, 2) : p(t.year, w);
      case 'M':
        return p(t.month, w);
      case 'd':
        return p(t.day, w);
      case 'H':
        return p(t.hour, w);
      case 'h':
        return p(t.hour % 12 || 12, w);
      case 'm':
        return p(t.minute, w);
      case 's':
        return p(t.second, w);
      case 'S':
        return p(t.millisecond, 3).slice(0, w);
      default:
        return t.hour < 12 ? 'AM' : 'PM';
    }
  });
}

/** Parses `value` by a pattern of y M d H m s S letters (local time); a mismatch fails like Java's parse. */
function parseByPattern(value: string, pattern: string, withTime: boolean): Date {
  const fields: string[] = [];
  const regex = pattern.replace(/y+|M+|d+|H+|m+|s+|S+|[.*+?^${}()|[\]\\]/g, (t) => {
    if (/^[yMdHmsS]/.test(t)) {
      fields.push(t[0]!);
      return `(\\d{${t.length === 1 ? '1,9' : t.length}})`;
    }
    return `\\${t}`;
  });
  const match = new RegExp(`^${regex}$`).exec(value);
  if (!match || (withTime && !fields.includes('H'))) {
    throw badArgument(`Text '${value}' could not be parsed`);
  }
  const part = (f: string) => {
    const i = fields.indexOf(f);
    return i === -1 ? 0 : Number(match[i + 1]);
  };
  const date = new Date(part('y'), part('M') - 1, part('d'), part('H'), part('m'), part('s'), part('S'));
  if (date.getMonth() !== part('M') - 1 || date.getDate() !== part('d')) {
    throw badArgument(`Text '${value}' could not be parsed`);
  }
  return date;
}

function rulesOf(text: string): string[] {
  return text
    .split(';')
    .filter((r) => r !== '')
    .map((r) => r.trim());
}

function parseDatePlugin(withTime: boolean, example: string): Plugin {
  return (input) => {
    const rule = input[1];
    if (input.length !== 2 || typeof rule !== 'string') {
      throw badArgument(`Syntax error. Syntax: text(pattern, iso | local | ms).e.g. ${example}`);
    }
    const rules = rulesOf(rule);
    if (rules.length === 0)
      throw badArgument('Invalid validation rule. Syntax: text(pattern, iso | local | ms)');
    const date = parseByPattern(javaText(input[0]), rules[0]!, withTime);
    if (!withTime) date.setHours(0, 0, 0, 0);
    return timestampAs(date.getTime(), rules[1] ?? 'iso');
  };
}

// ---- validate (InputValidation) ----

const VALIDATION_TYPES = ['String', 'Integer', 'Long', 'Float', 'Double', 'Boolean', 'Map', 'List'];

function validClass(value: unknown, type: string): boolean {
  switch (type) {
    case 'Map':
      return isDataMap(value);
    case 'List':
      return Array.isArray(value);
    case 'Integer':
    case 'Long':
      return typeof value === 'number' && Number.isInteger(value);
    case 'Float':
    case 'Double':
      return typeof value === 'number';
    case 'Boolean':
      return typeof value === 'boolean';
    default:
      return typeof value === 'string';
  }
}

function rangeCheck(id: string, value: unknown, from: string | undefined, to: string | undefined): void {
  if (typeof value === 'string') {
    if (from?.toLowerCase() === 'required') return;
    if (from !== undefined && value < from) throw badArgument(`${id} (${value}) < ${from}`);
    if (to !== undefined && value > to) throw badArgument(`${id} (${value}) > ${to}`);
    return;
  }
  if (typeof value !== 'number') return;
  const parse = Number.isInteger(value) ? str2long : str2double;
  if (from !== undefined && value < parse(from)) throw badArgument(`${id} (${javaText(value)}) < ${from}`);
  if (to !== undefined && value > parse(to)) throw badArgument(`${id} (${javaText(value)}) > ${to}`);
}

const validate: Plugin = (input) => {
  const rule = input[1];
  if (input.length !== 2 || typeof rule !== 'string') {
    throw badArgument(
      'Validation syntax error. Expect 2 arguments where the second one is the validation rule.',
    );
  }
  const rules = rulesOf(rule);
  if (rules.length < 2) {
    throw badArgument(
      'Invalid validation rule. Syntax: text(id, type), text(id, type, required) or text(id, type, range-start, range-end)',
    );
  }
  const [id, type] = rules as [string, string];
  if (!VALIDATION_TYPES.includes(type)) {
    throw badArgument(
      `Validation type '${type}' is not supported. Use String, Integer, Long, Float, Double, Boolean, Map or List.`,
    );
  }
  const evaluate = rules.at(-1)!.toLowerCase() === 'evaluate';
  const value = input[0];
  if (value === null || value === undefined) {
    if (!rules.some((r) => r.toLowerCase() === 'required')) return evaluate ? true : null;
    if (evaluate) return false;
    throw badArgument(`${id} is required.`);
  }
  const filtered = rules.filter((r) => !['required', 'evaluate'].includes(r.toLowerCase()));
  try {
    if (!validClass(value, type)) {
      const expected = type === 'Map' || type === 'List' ? type : type;
      throw badArgument(`Expect ${id} as ${expected}, Actual: ${javaTypeName(value)}`);
    }
    if (filtered.length > 2) rangeCheck(id, value, filtered[2], filtered[3]);
    return evaluate ? true : value;
  } catch (e) {
    if (evaluate) return false;
    throw e;
  }
};

// ---- list of maps (ListOfMap / UpdateListOfMap) ----

function findMapOfLists(input: DataMap): DataMap {
  for (const value of Object.values(input)) {
    if (Array.isArray(value)) return input;
    if (isDataMap(value)) return findMapOfLists(value);
  }
  return {};
}

function prepareMerge(input: unknown[], size: number): DataMap[] {
  const out: DataMap[] = [];
  for (let i = 1; i < input.length; i++) {
    const data = input[i];
    if (!isDataMap(data)) continue;
    const map = findMapOfLists(data);
    if (Object.keys(map).length === 0) continue;
    if (!Object.values(map).every((v) => Array.isArray(v) && v.length === size)) return [];
    out.push(map);
  }
  return out;
}

function merge(first: unknown[], additional: DataMap[]): unknown[] {
  const copy = deepCopy(first) as DataMap[];
  for (let i = 0; i < copy.length; i++) {
    for (const extra of additional) {
      for (const [k, list] of Object.entries(extra)) setOwn(copy[i]!, k, (list as unknown[])[i]);
    }
  }
  return copy;
}

const listOfMap: Plugin = (input) => {
  const data = input[0];
  if (!isDataMap(data)) return [];
  const map = findMapOfLists(data);
  if (Object.keys(map).length === 0) return [];
  const target: DataMap = {};
  for (const [k, items] of Object.entries(map)) {
    if (!Array.isArray(items)) continue;
    for (let i = 0; i < items.length; i++) setPath(target, `d[${i}].${k}`, items[i]);
  }
  const first = (target['d'] as unknown[] | undefined) ?? [];
  if (input.length > 1 && first.length > 0) {
    const toMerge = prepareMerge(input, first.length);
    return toMerge.length > 0 ? merge(first, toMerge) : [];
  }
  return first;
};

const updateListOfMap: Plugin = (input) => {
  const first = input[0];
  if (input.length > 1 && Array.isArray(first) && first.length > 0 && first.every(isDataMap)) {
    const toMerge = prepareMerge(input, first.length);
    if (toMerge.length > 0) return merge(first, toMerge);
  }
  return [];
};

function withoutKeys(map: DataMap, keys: unknown[]): DataMap {
  const names = keys.map(javaText);
  if (!names.some((k) => Object.hasOwn(map, k))) return map;
  const copy = deepCopy(map);
  for (const k of names) delete copy[k];
  return copy;
}

// ---- the registry ----

function arithmetic(verb: string, op: (a: number, b: number) => number): Plugin {
  return (input) => {
    atLeast(input, 2, `Expected at least two Numbers to ${verb}`);
    return reduce(input, op);
  };
}

function compare(input: unknown[], name: string, op: (a: number, b: number) => boolean): boolean {
  if (input.length !== 2) throw badArgument(`Input is required to compare using '${name}'`);
  return op(promote(input[0]).value, promote(input[1]).value);
}

function textPair(input: unknown[], op: (a: string, b: string) => boolean): boolean {
  return input.length === 2 && op(javaText(input[0]).toLowerCase(), javaText(input[1]).toLowerCase());
}

function listItem(input: unknown[], which: 'first' | 'last'): unknown {
  if (input.length !== 1) throw badArgument(`One input is required to get ${which} item from list`);
  const value = input[0];
  if (value === null || value === undefined) {
    throw badArgument(`Input cannot be null to get ${which} item from list`);
  }
  if (!Array.isArray(value)) throw badArgument(`Input must be a list to get ${which} item`);
  if (value.length === 0) throw badArgument(`Input cannot be empty to get ${which} item from list`);
  return which === 'first' ? value[0] : value.at(-1);
}

export const PLUGINS: ReadonlyMap<string, Plugin> = new Map<string, Plugin>([
  // arithmetic
  ['add', arithmetic('add', (a, b) => a + b)],
  ['subtract', arithmetic('subtract', (a, b) => a - b)],
  ['multiply', arithmetic('multiply', (a, b) => a * b)],
  [
    'div',
    (i) => {
      atLeast(i, 2, 'Expected at least two Numbers to divide');
      divideByZeroCheck(i.slice(1));
      return reduce(i, (a, b, whole) => (whole ? Math.trunc(a / b) : a / b));
    },
  ],
  [
    'mod',
    (i) => {
      if (i.length !== 2)
        throw badArgument(`Modulus expects only two values but got [${i.map(javaText).join(', ')}]`);
      divideByZeroCheck([i[1]]);
      return reduce(i, (a, b) => a % b);
    },
  ],
  [
    'increment',
    (i) => {
      if (i.length !== 1) throw badArgument('Expected exactly one Number to increment');
      return promote(i[0]).value + 1;
    },
  ],
  [
    'decrement',
    (i) => {
      if (i.length !== 1) throw badArgument('Expected exactly one Number to decrement');
      return promote(i[0]).value - 1;
    },
  ],
  [
    'round',
    (i) => {
      if (i.length < 1 || i.length > 2)
        throw badArgument('Expected a number and optional decimal places to round');
      let places = 0;
      if (i.length === 2) {
        const dp = promote(i[1]);
        if (dp.double || dp.value < 0)
          throw badArgument('Decimal places for round must be a whole number >= 0');
        places = dp.value;
      }
      const n = promote(i[0]);
      if (!n.double) return n.value;
      const factor = 10 ** places;
      // HALF_UP on the decimal text, as BigDecimal.valueOf(double).setScale does
      return Math.sign(n.value) * (Math.round(Number(`${Math.abs(n.value)}e${places}`)) / factor);
    },
  ],
  // logic
  [
    'eq',
    (i) => {
      if (i.length < 2) throw badArgument('Input is required to check for equality');
      return i.slice(1).every((v) => deepEquals(i[0], v));
    },
  ],
  [
    'ne',
    (i) => {
      if (i.length < 2) throw badArgument('Input is required to check for inequality');
      return i.slice(1).some((v) => !deepEquals(i[0], v));
    },
  ],
  ['gt', (i) => compare(i, 'Greater Than', (a, b) => a > b)],
  ['lt', (i) => compare(i, 'Less Than', (a, b) => a < b)],
  [
    'and',
    (i) => {
      if (i.length < 2) throw badArgument("Input is required to 'AND' values");
      return i.every(booleanValue);
    },
  ],
  [
    'or',
    (i) => {
      if (i.length < 2) throw badArgument("Input is required to 'OR' values");
      return i.some(booleanValue);
    },
  ],
  [
    'not',
    (i) => {
      if (i.length !== 1) {
        throw badArgument(`One single input is required for negation - got: [${i.map(javaText).join(', ')}]`);
      }
      return !booleanValue(i[0]);
    },
  ],
  [
    'isNull',
    (i) => {
      if (i.length !== 1) throw badArgument('Only one value is accepted');
      return i[0] === null || i[0] === undefined;
    },
  ],
  [
    'notNull',
    (i) => {
      if (i.length !== 1) throw badArgument('Only one value is accepted');
      return i[0] !== null && i[0] !== undefined;
    },
  ],
  [
    'ternary',
    (i) => {
      if (i.length !== 3) {
        throw badArgument(
          `Three parts are required for Ternary Operation - got: [${i.map(javaText).join(', ')}]`,
        );
      }
      return booleanValue(i[0]) ? i[1] : i[2];
    },
  ],
  ['startsWith', (i) => textPair(i, (a, b) => a.startsWith(b))],
  ['endsWith', (i) => textPair(i, (a, b) => a.endsWith(b))],
  [
    'includes',
    (i) => {
      if (i.length !== 2) return false;
      if (Array.isArray(i[0])) return i[0].some((v) => deepEquals(v, i[1]));
      return textPair(i, (a, b) => a.includes(b));
    },
  ],
  // types
  ['text', converter('Text', textValue)],
  ['binary', converter('Binary', binaryValue)],
  [
    'boolean',
    (i) => {
      if (i.length === 0) throw badArgument('Input is required to convert Boolean');
      return i.length === 1 ? booleanValue(i[0]) : i.map(booleanValue);
    },
  ],
  ['int', converter('Integer', intValue)],
  ['long', converter('Long', longValue)],
  ['float', converter('Float', doubleValue)],
  ['double', converter('Double', doubleValue)],
  ['b64', converter('Base64', b64Value)],
  [
    'length',
    (i) => {
      if (i.length !== 1) throw badArgument('Expected exactly one argument in order to get Length');
      return lengthOf(i[0]);
    },
  ],
  [
    'substring',
    (i) => {
      if (i.length === 0) throw badArgument('Input is required for substring');
      const value = textValue(i[0]);
      const start = i.length > 1 ? intValue(i[1]) : -1;
      const end = i.length > 2 ? intValue(i[2]) : -1;
      if (
        (end >= 0 && end > value.length) ||
        (start >= 0 && start > value.length) ||
        (start > end && start >= 0 && end >= 0)
      ) {
        throw badArgument(`Substring indexes are out of bounds: [${start}, ${end}]`);
      }
      if (start >= 0 && end >= 0) return value.substring(start, end);
      if (start >= 0 && start < value.length) return value.substring(start);
      return value;
    },
  ],
  [
    'concat',
    (i) => {
      if (i.length < 2) throw badArgument('Input is required for String Concatenation');
      return i.map(textValue).join('');
    },
  ],
  ['uuid', () => randomUUID()],
  [
    'dateTime',
    (i) => {
      const time = zonedTime(Date.now(), i.length === 2 ? javaText(i[1]) : undefined);
      return i.length === 0 ? isoZoned(time) : formatDate(javaText(i[0]), time);
    },
  ],
  ['now', (i) => timestampAs(Date.now(), i.length > 0 ? javaText(i[0]) : 'iso')],
  ['parseDate', parseDatePlugin(false, 'f:parseDate(input.body.date, text(MM/dd/yyyy, ms))')],
  [
    'parseDateTime',
    parseDatePlugin(true, 'f:parseDateTime(input.body.datetime, text(MM/dd/yyyy HH:mm:ss; ms))'),
  ],
  [
    'defaultValue',
    (i) => {
      if (i.length > 1 && (i[0] === null || i[0] === undefined)) return i[1];
      return i.length > 0 ? i[0] : null;
    },
  ],
  ['listOfMap', listOfMap],
  ['updateListOfMap', updateListOfMap],
  [
    'removeKey',
    (i) => {
      if (i.length < 2) return null;
      const first = i[0];
      if (isDataMap(first)) return withoutKeys(first, i.slice(1));
      if (Array.isArray(first)) return first.map((o) => (isDataMap(o) ? withoutKeys(o, i.slice(1)) : o));
      return null;
    },
  ],
  ['uniqueSet', (i) => (i.length === 1 && Array.isArray(i[0]) ? uniqueList(i[0]) : null)],
  ['validate', validate],
  [
    'setConfig',
    (i, context) => {
      const [key, value] = i;
      if (
        i.length !== 2 ||
        typeof key !== 'string' ||
        key.trim() === '' ||
        value === null ||
        value === undefined
      ) {
        return false;
      }
      context.setConfig?.(key, javaText(value));
      return true;
    },
  ],
  // collections
  [
    'isEmpty',
    (i) => {
      if (i.length !== 1) throw badArgument('One input is required to check if value is empty');
      const value = i[0];
      if (value === null || value === undefined)
        throw badArgument('Input cannot be null to check if value is empty');
      if (Array.isArray(value) || typeof value === 'string' || value instanceof Uint8Array)
        return value.length === 0;
      if (isDataMap(value)) return Object.keys(value).length === 0;
      throw badArgument(`Unsupported input type to check if value is empty: ${javaTypeName(value)}`);
    },
  ],
  ['getFirst', (i) => listItem(i, 'first')],
  ['getLast', (i) => listItem(i, 'last')],
]);

function uniqueList(items: unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const item of items) if (!out.some((o) => deepEquals(o, item))) out.push(item);
  return out;
}
