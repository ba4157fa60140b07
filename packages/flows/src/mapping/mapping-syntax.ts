/**
 * The load-time text rules of a mapping line, as Mercury's flow compiler applies them:
 * normalizing a line into 2-part `LHS -> RHS` rules (three-part lines, `!model.x` negation), the
 * rewrite of the deprecated type suffixes (`model.x:int`) into plugin calls, and the validity checks
 * for input and output mappings (CompileFlows, DataMappingHelper.validInput/validOutput,
 * SimpleTypeMatchingConverter).
 */
import { PLUGINS } from './plugins.ts';
import { splitOn } from './java-text.ts';

const MAP_TO = '->';

/** Mercury's placeholder texts for lines it cannot split; they then fail validation. */
export const BAD_SYNTAX = 'Syntax must be (LHS -> RHS) or (LHS -> model.variable -> RHS)';
export const BAD_THREE_PART = '3-part data mapping must have model variable as the middle part';

/** One raw line → its 2-part rules (a `text(` line is always 2-part; 3-part lines become two). */
export function normalizeLine(raw: string): string[] {
  const entry = raw.trim();
  if (entry.startsWith('text(')) return [normalizeNegation(entry)];
  const parts = splitArrows(entry);
  if (parts.length === 2) return [normalizeNegation(`${parts[0]} -> ${parts[1]}`)];
  if (parts.length === 3) {
    const [first, middle, last] = parts as [string, string, string];
    if (!middle.startsWith('model.') && !middle.startsWith('!model.')) return [BAD_THREE_PART];
    return [
      normalizeNegation(`${first} -> ${middle}`),
      normalizeNegation(`${withoutTypeQualifier(middle)} -> ${last}`),
    ];
  }
  return [BAD_SYNTAX];
}

function splitArrows(text: string): string[] {
  const parts: string[] = [];
  let rest = text;
  let sep = rest.indexOf(MAP_TO);
  while (sep !== -1) {
    parts.push(rest.slice(0, sep).trim());
    rest = rest.slice(sep + 2).trim();
    sep = rest.indexOf(MAP_TO);
  }
  parts.push(rest);
  return parts;
}

/** `!model.x` (either side) → `model.x:!` (filterMapping). */
function normalizeNegation(mapping: string): string {
  const text = mapping.trim();
  const sep = text.lastIndexOf(MAP_TO);
  if (sep === -1) return mapping;
  let lhs = text.slice(0, sep).trim();
  let rhs = text.slice(sep + 2).trim();
  if (lhs.startsWith('!model.')) lhs = negated(lhs);
  if (rhs.startsWith('!model.')) rhs = negated(rhs);
  return `${lhs} -> ${rhs}`;
}

function negated(text: string): string {
  return `${text.includes(':') ? text.slice(1, text.indexOf(':')) : text.slice(1)}:!`;
}

function withoutTypeQualifier(text: string): string {
  const step = text.startsWith('!') ? text.slice(1) : text;
  return step.includes(':') ? step.slice(0, step.indexOf(':')) : step;
}

// ---- deprecated suffixes → plugin calls (SimpleTypeMatchingConverter) ----

const SIMPLE_TYPES = new Set([
  'text',
  'binary',
  'int',
  'long',
  'float',
  'double',
  'boolean',
  'uuid',
  'length',
  'b64',
]);

/** `model.k:int -> x` → `f:int(model.k) -> x`; `LHS -> model.k:int` → `f:int(LHS) -> model.k`. */
export function convertSuffixes(entry: string): string {
  const sep = entry.lastIndexOf(MAP_TO);
  if (sep < 0) return entry;
  const lhs = entry.slice(0, sep).trim();
  const rhs = entry.slice(sep + 2).trim();
  const lhsColon = typeColon(lhs);
  if (lhsColon > 0) {
    const plugin = pluginCall(lhs.slice(0, lhsColon).trim(), lhs.slice(lhsColon + 1).trim());
    return plugin === null ? entry : `${plugin} -> ${rhs}`;
  }
  const rhsColon = typeColon(rhs);
  if (rhsColon > 0) {
    const plugin = pluginCall(lhs, rhs.slice(rhsColon + 1).trim());
    return plugin === null ? entry : `${plugin} -> ${rhs.slice(0, rhsColon).trim()}`;
  }
  return entry;
}

function typeColon(token: string): number {
  return token.startsWith('model.') ? token.indexOf(':') : -1;
}

function inner(qualifier: string, prefix: string): string {
  return qualifier.slice(prefix.length, qualifier.length - 1).trim();
}

function pluginCall(source: string, qualifier: string): string | null {
  if (SIMPLE_TYPES.has(qualifier)) return `f:${qualifier}(${source})`;
  if (qualifier === '!') return `f:not(${source})`;
  if (!qualifier.endsWith(')')) return null;
  if (qualifier.startsWith('and(')) return `f:and(${source}, ${inner(qualifier, 'and(')})`;
  if (qualifier.startsWith('or(')) return `f:or(${source}, ${inner(qualifier, 'or(')})`;
  if (qualifier.startsWith('concat(')) return `f:concat(${source}, ${inner(qualifier, 'concat(')})`;
  if (qualifier.startsWith('substring(')) {
    const args = splitOn(qualifier.slice('substring('.length, -1), ',').map((p) => {
      const v = p.trim();
      return v.startsWith('model.') ? v : `int(${v})`;
    });
    return `f:substring(${[source, ...args].join(', ')})`;
  }
  if (qualifier.startsWith('boolean') && qualifier.slice('boolean'.length).trim().startsWith('(')) {
    const body = qualifier.slice(qualifier.indexOf('(') + 1, -1).trim();
    const eq = body.indexOf('=');
    const token = (eq < 0 ? body : body.slice(0, eq)).trim();
    const flag = eq < 0 ? null : body.slice(eq + 1).trim();
    const conditionTrue = flag === null || flag.toLowerCase() === 'true';
    if (token === 'null') return `f:${conditionTrue ? 'isNull' : 'notNull'}(${source})`;
    const compared = source.startsWith('model.') ? `${source}:text` : source;
    return `f:${conditionTrue ? 'eq' : 'ne'}(${compared}, text(${token}))`;
  }
  return null;
}

// ---- validity (DataMappingHelper) ----

function sides(line: string): [string, string] | null {
  const sep = line.lastIndexOf(MAP_TO);
  if (sep <= 0) return null;
  return [line.slice(0, sep).trim(), line.slice(sep + 2).trim()];
}

/** Not the whole `model`, nor the whole `model.parent` / `model.root`. */
function validModel(key: string): boolean {
  const first = splitOn(key, '!: ()')[0];
  if (first === undefined || first === 'model') return false;
  if (!first.startsWith('model.')) return true;
  const segments = splitOn(first, '.');
  return (
    segments.length !== 1 && (segments.length !== 2 || (segments[1] !== 'parent' && segments[1] !== 'root'))
  );
}

function validPluginCall(lhs: string): boolean {
  if (!lhs.endsWith(')')) return false;
  const open = lhs.indexOf('(');
  return open > 0 && PLUGINS.has(lhs.slice(2, open).trim());
}

const CONSTANT_PREFIXES = ['text(', 'file(', 'classpath(', 'int(', 'long(', 'float(', 'double(', 'boolean('];

function validConstant(lhs: string): boolean {
  if (lhs.startsWith('map(') && lhs.endsWith(')')) return validKeyValues(lhs);
  return CONSTANT_PREFIXES.some((p) => lhs.startsWith(p)) && lhs.endsWith(')');
}

/** `map(k=v, ...)`: no empty and no duplicate key; `map(config.key)`: not empty. */
function validKeyValues(text: string): boolean {
  const ref = text.slice('map('.length, text.lastIndexOf(')')).trim();
  if (!ref.includes('=') && !ref.includes(',')) return ref !== '';
  const pairs = splitOn(ref, ',');
  const keys = new Set<string>();
  for (const kv of pairs) {
    const eq = kv.indexOf('=');
    const k = (eq === -1 ? kv : kv.slice(0, eq)).trim();
    if (k === '') return false;
    keys.add(k);
  }
  return keys.size === pairs.length;
}

export function validInput(line: string): boolean {
  const both = sides(line);
  if (both === null) return false;
  const [lhs, rhs] = both;
  if (rhs.startsWith('f:')) return false;
  if (lhs.startsWith('f:')) return validPluginCall(lhs);
  if (!validModel(lhs) || !validModel(rhs) || lhs === rhs) return false;
  if (lhs === 'input' || ['input.', '$', 'model.', 'error.'].some((p) => lhs.startsWith(p))) return true;
  return validConstant(lhs);
}

const OUTPUT_LHS_PREFIXES = ['input.', 'f:', '$', 'model.', 'result.', 'header.'];
const OUTPUT_LHS_WORDS = ['input', 'datatype', 'result', 'status', 'header'];

export function validOutput(line: string, decisionTask: boolean): boolean {
  const both = sides(line);
  if (both === null) return false;
  const [lhs, rhs] = both;
  if (!validModel(lhs) || !validModel(rhs) || lhs === rhs) return false;
  const lhsOk =
    OUTPUT_LHS_WORDS.includes(lhs) ||
    OUTPUT_LHS_PREFIXES.some((p) => lhs.startsWith(p)) ||
    validConstant(lhs);
  const rhsOk =
    (rhs === 'decision' && decisionTask) ||
    ['file(', 'output.', 'model.', 'ext:'].some((p) => rhs.startsWith(p));
  return lhsOk && rhsOk;
}

const RESERVED_MODEL_KEYS = [
  'model.cid',
  'model.instance',
  'model.flow',
  'model.ttl',
  'model.trace',
  'model.none',
  'model.parent',
  'model.root',
  'model.run',
];

/** The reserved state-machine key a target would overwrite, or null (CompileFlows.reservedModelKeyViolation). */
export function reservedKeyViolation(rhs: string): string | null {
  for (const reserved of RESERVED_MODEL_KEYS) {
    if (rhs === reserved) return reserved;
    const shared = reserved === 'model.parent' || reserved === 'model.root';
    if (!shared && (rhs.startsWith(`${reserved}.`) || rhs.startsWith(`${reserved}[`))) return reserved;
  }
  return null;
}

/** An `ext:<key>` target (needs the flow's external.state.machine). */
export function hasExternalTarget(line: string): boolean {
  const sep = line.indexOf(MAP_TO);
  if (sep === -1) return false;
  const rhs = line.slice(sep + 2).trim();
  return rhs.startsWith('ext:') && rhs !== 'ext:';
}

/** No `->`, or a side ending in `.` (or a target ending in `:`): Mercury refuses the flow. */
export function isIncomplete(line: string): boolean {
  const sep = line.indexOf(MAP_TO);
  if (sep === -1) return true;
  const lhs = line.slice(0, sep).trim();
  const rhs = line.slice(sep + 2).trim();
  return lhs.endsWith('.') || rhs.endsWith('.') || rhs.endsWith(':');
}

/** The two sides of a validated rule. */
export function splitRule(line: string): [string, string] {
  const sep = line.lastIndexOf(MAP_TO);
  return [line.slice(0, sep).trim(), line.slice(sep + 2).trim()];
}
