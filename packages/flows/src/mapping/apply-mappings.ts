/**
 * applyMappings: runs a task's compiled mapping lines, top to bottom, against one MappingScope, with
 * Mercury's runtime rules (TaskExecutor): `{model.x}` and `[model.n]` resolved per run, the null
 * rules (a missing source removes a model target, a stored null sets null), deep copies into the
 * model, the `*` / `header` input targets, the `output.status` / `output.header` checks, files and
 * `ext:`. Synchronous on purpose: concurrent branches of one flow instance never interleave inside
 * a mapping (Mercury takes a lock for the same effect).
 */
import { appendFileSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { AppException } from '@gatehouse/functions';
import type { CompiledMapping, MappingHooks, MappingRule, MappingScope } from './compiled-mapping.ts';
import { type DataMap, getPath, isDataMap, removePath, setPath } from './data-path.ts';
import { filePath } from './file-access.ts';
import { javaText, javaTypeName, str2int } from './java-text.ts';
import { parseSource } from './compile-mapping.ts';
import { copyForModel, type ReadContext, readSource, type Source, sourceExists } from './mapping-source.ts';
import { reservedKeyViolation } from './mapping-syntax.ts';
import { parseTarget, type Target } from './mapping-target.ts';

const DEFAULT_MAX_ARRAY = 1000;

export function applyMappings(mappings: readonly CompiledMapping[], scope: MappingScope): void {
  if (mappings.length === 0) return;
  const kind = mappings[0]!.kind;
  if (kind === 'input') applyInput(mappings, scope);
  else applyOutput(mappings, scope);
}

// ---- input mapping ----

function applyInput(mappings: readonly CompiledMapping[], scope: MappingScope): void {
  const root: DataMap = { input: scope.input, model: scope.model };
  if (scope.error !== undefined) root['error'] = scope.error;
  const context: ReadContext = { root, hooks: scope.hooks };
  // the body under construction; `*` holds a non-map that replaces it (unwrapBodyIfWildcard)
  let body: DataMap = isDataMap(scope.body) ? scope.body : {};
  for (const mapping of mappings) {
    for (const rule of mapping.rules) {
      const { source, lookup, lhsText, target, lhsBuilt } = resolve(rule, root, scope, 'input');
      let value = readSource(source, context, lhsBuilt);
      if (value === null && lookup && scope.forkItem !== undefined)
        value = forkItemValue(lhsText, root, scope);
      const exists = lookup && value === null && sourceExists(source, root);
      if (target.type === 'external') {
        scope.hooks?.external?.(target.key, value);
      } else if (target.type === 'model') {
        if (value === null && !exists) removePath(root, target.path);
        else setPath(root, target.path, copyForModel(value));
      } else if (value !== null) {
        body = writeInputTarget(target, value, body, scope, rule.text, lookup);
      } else if (exists || !lookup) {
        nullInputTarget(target, body, lookup);
      }
    }
  }
  const star = body['*'];
  scope.body = star !== null && star !== undefined ? star : body;
}

function writeInputTarget(
  target: Target,
  value: unknown,
  body: DataMap,
  scope: MappingScope,
  text: string,
  lookup: boolean,
): DataMap {
  if (target.type === 'all' && lookup) {
    if (isDataMap(value)) return { ...value };
    body['*'] = value;
  } else if (target.type === 'headers' && lookup) {
    if (!isDataMap(value)) {
      scope.hooks?.warn?.(`Invalid input mapping '${text}' - expect: Map, actual: ${javaTypeName(value)}`);
      return body;
    }
    for (const [k, v] of Object.entries(value))
      if (v !== null && v !== undefined) scope.headers[k] = javaText(v);
  } else if (target.type === 'header') {
    if (target.name !== '') scope.headers[target.name] = javaText(value);
  } else {
    setPath(body, bodyPath(target), value);
  }
  return body;
}

/** A null source: a stored null is written as null; a null constant removes the target. */
function nullInputTarget(target: Target, body: DataMap, lookup: boolean): void {
  if (target.type === 'header') {
    // null header values are never set; Mercury writes the stored null into the body instead
    if (lookup) setPath(body, `header.${target.name}`, null);
    return;
  }
  if (lookup) setPath(body, bodyPath(target), null);
  else removePath(body, bodyPath(target));
}

/** Mercury keeps `*` and `header` as literal body keys in the cases its special handling skips. */
function bodyPath(target: Target): string {
  if (target.type === 'all') return '*';
  if (target.type === 'headers') return 'header';
  return target.type === 'body' ? target.path : '';
}

function forkItemValue(lhs: string, root: DataMap, scope: MappingScope): unknown {
  const fork = scope.forkItem!;
  if (lhs === `${fork.source}.ITEM`) {
    const list = getPath(root, fork.source);
    return Array.isArray(list) ? (list[fork.index] ?? null) : list;
  }
  if (lhs === `${fork.source}.INDEX`) return fork.index;
  return null;
}

// ---- output mapping ----

function applyOutput(mappings: readonly CompiledMapping[], scope: MappingScope): void {
  const root: DataMap = {
    input: scope.input,
    model: scope.model,
    result: scope.result ?? null,
    header: scope.header ?? {},
    status: scope.status ?? 200,
    output: scope.output,
  };
  const context: ReadContext = { root, hooks: scope.hooks };
  for (const mapping of mappings) {
    for (const rule of mapping.rules) {
      const { source, lookup, target, lhsBuilt, rhsBuilt } = resolve(rule, root, scope, 'output');
      const value = readSource(source, context, lhsBuilt);
      if (value === null && lookup && isPathTarget(target)) {
        const path = targetPath(target);
        if (sourceExists(source, root)) setPath(root, path, null);
        else removePath(root, path);
      }
      if (target.type === 'file') writeFile(target, value, scope.hooks, rhsBuilt);
      else if (value !== null) writeOutputTarget(target, value, root, scope, rule.text);
      else if (target.type === 'external') scope.hooks?.external?.(target.key, null);
    }
  }
  if (Object.hasOwn(root, 'decision')) scope.setDecision?.(root['decision']);
}

function isPathTarget(target: Target): boolean {
  return ['model', 'output', 'status', 'outputHeaders', 'decision'].includes(target.type);
}

function targetPath(target: Target): string {
  switch (target.type) {
    case 'model':
    case 'output':
      return target.path;
    case 'status':
      return 'output.status';
    case 'outputHeaders':
      return 'output.header';
    default:
      return 'decision';
  }
}

function writeOutputTarget(
  target: Target,
  value: unknown,
  root: DataMap,
  scope: MappingScope,
  text: string,
): void {
  if (target.type === 'external') {
    scope.hooks?.external?.(target.key, value);
    return;
  }
  if (target.type === 'status') {
    const status = typeof value === 'number' && Number.isInteger(value) ? value : str2int(javaText(value));
    if (status < 100 || status > 599) {
      scope.hooks?.warn?.(
        `Invalid output mapping '${text}' - expect: valid HTTP status code, actual: ${status}`,
      );
      return;
    }
    setPath(root, 'output.status', status);
    return;
  }
  if (target.type === 'outputHeaders' && !isDataMap(value)) {
    scope.hooks?.warn?.(`Invalid output mapping '${text}' - expect: Map, actual: ${javaTypeName(value)}`);
    return;
  }
  setPath(root, targetPath(target), target.type === 'model' ? copyForModel(value) : value);
}

/**
 * `file(/p)` / `file(append:/p)`: bytes and text as they are, lists and maps as JSON; null deletes.
 * Only inside the file folders (file-access.ts).
 */
function writeFile(
  target: Extract<Target, { type: 'file' }>,
  value: unknown,
  hooks: MappingHooks | undefined,
  built: boolean,
): void {
  const path = filePath(target.path, hooks, built);
  const found = existsSync(path);
  if (found && statSync(path).isDirectory()) return;
  if (value === null) {
    if (found) rmSync(path);
    return;
  }
  if (!found) mkdirSync(dirname(path), { recursive: true });
  const data =
    value instanceof Uint8Array
      ? value
      : typeof value === 'string'
        ? value
        : isDataMap(value) || Array.isArray(value)
          ? JSON.stringify(value)
          : javaText(value);
  if (target.mode === 'append') appendFileSync(path, data);
  else writeFileSync(path, data);
}

// ---- per-run resolution of dynamic sides ----

interface Resolved {
  readonly source: Source;
  readonly lookup: boolean;
  readonly lhsText: string;
  readonly target: Target;
  /** The run's data changed the side (`{model.x}`, `[model.n]`): it may come from the request. */
  readonly lhsBuilt: boolean;
  readonly rhsBuilt: boolean;
}

function resolve(rule: MappingRule, root: DataMap, scope: MappingScope, kind: 'input' | 'output'): Resolved {
  let { source, target } = rule;
  let lookup = rule.lhsIsLookup;
  let lhsText = rule.lhsText;
  let lhsBuilt = false;
  let rhsBuilt = false;
  const max = scope.hooks?.maxModelArraySize ?? DEFAULT_MAX_ARRAY;
  if (rule.lhsDynamic) {
    const text = substitute(rule.lhsText, root, false, max);
    if (text !== rule.lhsText) {
      lhsBuilt = true;
      const parsed = parseSource(text, kind);
      source = parsed.source;
      lookup = parsed.lookup;
      lhsText = kind === 'input' && text.startsWith('input.header.') ? text.toLowerCase() : text;
    }
  }
  if (rule.rhsDynamic) {
    const text = substitute(rule.rhsText, root, true, max);
    if (text !== rule.rhsText) {
      rhsBuilt = true;
      const reserved = reservedKeyViolation(text);
      if (reserved !== null) {
        throw new AppException(
          400,
          `Cannot set RHS to the reserved state-machine key '${reserved}' - ${rule.rhsText}`,
        );
      }
      target = parseTarget(text, kind);
    }
  }
  return { source, lookup, lhsText, target, lhsBuilt, rhsBuilt };
}

/** `{model.x}` → the model value's text (string or number, else `null`); other braces stay. */
function substituteVars(text: string, root: DataMap): string {
  return text.replace(/\{([^{}]*)\}/g, (whole, middle: string) => {
    const key = middle.trim();
    if (!key.startsWith('model.') || key.endsWith('.')) return whole;
    return modelText(getPath(root, key));
  });
}

function modelText(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : 'null';
}

/** Runtime variables, then `[model.n]` indexes; on a target, negative or too large indexes fail. */
function substitute(statement: string, root: DataMap, isRhs: boolean, max: number): string {
  const text = substituteVars(statement, root);
  if (!text.includes('[') || !text.includes(']')) return text;
  let out = '';
  let start = 0;
  while (start < text.length) {
    const open = text.indexOf('[', start);
    const close = text.indexOf(']', start);
    if (open === -1 || close <= open) {
      out += text.slice(start);
      break;
    }
    out += text.slice(start, open + 1);
    const idx = text.slice(open + 1, close).trim();
    if (idx.startsWith('model.') && !idx.endsWith('.')) {
      const ptr = str2int(modelText(getPath(root, idx)));
      if (isRhs && ptr > max) {
        throw new AppException(400, `Cannot set RHS to index > ${ptr} that exceeds max ${max} - ${text}`);
      }
      if (isRhs && ptr < 0) throw new AppException(400, `Cannot set RHS to negative index - ${text}`);
      out += String(ptr);
    } else {
      if (isRhs && idx !== '' && str2int(idx) < 0) {
        throw new AppException(400, `Cannot set RHS to negative index - ${text}`);
      }
      out += idx;
    }
    out += ']';
    start = close + 1;
  }
  return out;
}
