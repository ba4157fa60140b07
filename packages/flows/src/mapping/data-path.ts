/**
 * Dot/bracket paths over plain JSON-like data (`a.b.c`, `list[1]`, `a[0][2].b`, `items[]`), with the
 * semantics of Mercury's MultiLevelMap: a whole path that is itself a key of the root wins; reading a
 * missing path gives "not found" (distinct from a stored null, for the null rules); writing creates
 * intermediate maps and lists and pads lists with nulls; `[]` appends; removing a map key deletes
 * it, removing a list element sets it to null.
 *
 * Paths are built from request data (`{model.x}` substitution), so no segment may be `__proto__`,
 * `constructor` or `prototype`: walking into them reaches a prototype (`model.__proto__.x` would
 * set `Object.prototype.x` for the whole process). Such a path is refused with 400 wherever it is
 * read, written or removed, and a copied map keeps a `"__proto__"` key of parsed JSON as data.
 */
import { AppException } from '@gatehouse/functions';

export type DataMap = Record<string, unknown>;

/** Returned by lookup for a path that does not exist (a stored null is returned as null). */
export const NOT_FOUND: unique symbol = Symbol('not found');

export function isDataMap(value: unknown): value is DataMap {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !ArrayBuffer.isView(value);
}

interface Segment {
  readonly key: string;
  /** Indexes after the key: `a[0][2]` → [0, 2]; -1 marks an empty `[]`. */
  readonly indexes: readonly number[];
}

/**
 * Parsed paths, kept because mapping lines use the same few paths on every run. Paths built at run
 * time (`{model.x}` substitution) could be many: the cache is simply emptied when it gets large.
 */
const parsedPaths = new Map<string, readonly Segment[]>();
const MAX_PARSED_PATHS = 10_000;

const UNSAFE_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype']);

/** The first segment of a path that could reach a prototype, if any (a key or a JSON path step). */
export function unsafeSegment(keys: Iterable<string>): string | undefined {
  for (const key of keys) if (UNSAFE_SEGMENTS.has(key)) return key;
  return undefined;
}

/** 400 for a path with an unsafe segment. */
export function unsafePathError(segment: string, path: string): AppException {
  return new AppException(400, `Path segment '${segment}' is not allowed - ${path}`);
}

function segmentsOf(path: string): readonly Segment[] {
  let segments = parsedPaths.get(path);
  if (segments === undefined) {
    if (parsedPaths.size >= MAX_PARSED_PATHS) parsedPaths.clear();
    segments = parseSegments(path);
    const unsafe = unsafeSegment(segments.map((s) => s.key));
    if (unsafe !== undefined) throw unsafePathError(unsafe, path);
    parsedPaths.set(path, segments);
  }
  return segments;
}

/** `a.b[0].c` → segments; empty parts between dots are dropped (Mercury's split). */
function parseSegments(path: string): Segment[] {
  const out: Segment[] = [];
  for (const part of path.split('.')) {
    if (part === '') continue;
    const open = part.indexOf('[');
    if (open <= 0 || !part.endsWith(']')) {
      out.push({ key: part, indexes: [] });
      continue;
    }
    const indexes: number[] = [];
    for (const raw of part.slice(open).split(/[[\]]/)) {
      if (raw === '') continue;
      indexes.push(/^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN);
    }
    // `x[]` has no index text at all: an append marker
    if (indexes.length === 0) indexes.push(-1);
    out.push({ key: part.slice(0, open), indexes });
  }
  return out;
}

function isComposite(path: string): boolean {
  return path.includes('.') || path.includes('[') || path.includes(']');
}

/** The value at `path`, or NOT_FOUND. */
export function lookup(root: DataMap, path: string): unknown {
  if (path === '') return NOT_FOUND;
  const segments = segmentsOf(path);
  if (Object.hasOwn(root, path)) return root[path];
  if (!isComposite(path)) return NOT_FOUND;
  let current: DataMap = root;
  for (let n = 0; n < segments.length; n++) {
    const { key, indexes } = segments[n]!;
    if (!Object.hasOwn(current, key)) return NOT_FOUND;
    let value: unknown = current[key];
    for (const i of indexes) {
      if (!Array.isArray(value) || !Number.isInteger(i) || i < 0 || i >= value.length) return NOT_FOUND;
      value = value[i];
    }
    if (n === segments.length - 1) return value;
    if (!isDataMap(value)) return NOT_FOUND;
    current = value;
  }
  return NOT_FOUND;
}

/** The value at `path`; null when missing. */
export function getPath(root: DataMap, path: string): unknown {
  const value = lookup(root, path);
  return value === NOT_FOUND ? null : value;
}

export function pathExists(root: DataMap, path: string): boolean {
  return lookup(root, path) !== NOT_FOUND;
}

/** Writes `value` at `path`, creating what is missing. `[]` appends to the list (a new one at 0). */
export function setPath(root: DataMap, path: string, value: unknown): void {
  writePath(root, path, value, false);
}

/** Deletes a map key at `path` (a list element becomes null); nothing when the path is missing. */
export function removePath(root: DataMap, path: string): void {
  if (lookup(root, path) === NOT_FOUND) return;
  writePath(root, path, null, true);
}

function writePath(root: DataMap, path: string, value: unknown, remove: boolean): void {
  const segments = segmentsOf(path);
  if (segments.length === 0) return;
  let current: DataMap = root;
  for (let n = 0; n < segments.length; n++) {
    const { key, indexes } = segments[n]!;
    const last = n === segments.length - 1;
    if (indexes.length === 0) {
      if (last) {
        if (remove) delete current[key];
        else current[key] = value;
        return;
      }
      const next = current[key];
      if (isDataMap(next)) current = next;
      else current = current[key] = {};
      continue;
    }
    let list = current[key];
    if (!Array.isArray(list)) list = current[key] = [];
    current = descend(list as unknown[], indexes, last, value);
    if (last) return;
  }
}

/**
 * Walks `indexes` into `list`, creating nested lists and padding with nulls. On the last path segment
 * the value is stored at the final index; otherwise the map found (or created) there is returned.
 */
function descend(list: unknown[], indexes: readonly number[], last: boolean, value: unknown): DataMap {
  let current = list;
  for (let k = 0; k < indexes.length; k++) {
    let i = indexes[k]!;
    if (i === -1) i = current.length; // `[]`: append
    if (!Number.isInteger(i) || i < 0) throw new RangeError(`invalid list index in path`);
    while (current.length <= i) current.push(null);
    if (k < indexes.length - 1) {
      const next = current[i];
      if (Array.isArray(next)) current = next;
      else current = current[i] = [] as unknown[];
      continue;
    }
    if (last) {
      current[i] = value;
      return {};
    }
    const next = current[i];
    if (isDataMap(next)) return next;
    const made: DataMap = {};
    current[i] = made;
    return made;
  }
  return {};
}

/** A deep copy of maps and lists (other values as they are), for values written to the model. */
export function deepCopy<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => deepCopy(v)) as T;
  if (!isDataMap(value)) return value;
  // Object.keys, not Object.entries: no [key, value] pair made per key on this hot path
  const out: DataMap = {};
  for (const k of Object.keys(value)) setOwn(out, k, deepCopy(value[k]));
  return out as T;
}

/**
 * `map[key] = value` for a key taken from data: a `"__proto__"` key (JSON.parse makes one an own
 * property) stays an own property, where an assignment would replace the map's prototype.
 */
export function setOwn(map: DataMap, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true });
  else map[key] = value;
}
