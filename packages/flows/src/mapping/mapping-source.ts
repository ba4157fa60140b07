/**
 * The left-hand side of a mapping rule: parsed once into a Source, then read against the working
 * set of one task run (`{input, model, error}` for an input mapping, `{input, model, result, header,
 * status, output}` for an output mapping). Constants, paths, `$.` JSON paths, `f:` plugin calls and
 * the legacy `model.x:type` forms that the load-time rewrite leaves in place.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { AppException } from '@gatehouse/functions';
import { type DataMap, deepCopy, getPath, isDataMap, lookup, NOT_FOUND } from './data-path.ts';
import { filePath, resourcePath } from './file-access.ts';
import { javaText, splitOn, str2double, str2int, str2long } from './java-text.ts';
import { readJsonPath } from './json-path.ts';
import { binaryValue, lengthOf, PLUGINS, textValue } from './plugins.ts';
import type { MappingHooks } from './mapping-hooks.ts';
import { randomUUID } from 'node:crypto';

export type FileMode = 'text' | 'json' | 'binary' | 'append';

export type Source =
  | { readonly type: 'constant'; readonly value: unknown }
  | { readonly type: 'config'; readonly key: string }
  | { readonly type: 'file'; readonly mode: FileMode; readonly path: string; readonly classpath: boolean }
  | { readonly type: 'path'; readonly path: string; readonly legacyType?: string }
  | { readonly type: 'jsonPath'; readonly expression: string }
  | {
      readonly type: 'plugin';
      readonly name: string;
      readonly text: string;
      readonly args: readonly Source[];
    }
  /** An `f:` argument of a plugin: Mercury passes null instead of running it (no nesting). */
  | { readonly type: 'null' };

/** `file(text:/p)` / `classpath(json:p)` → mode and absolute path (SimpleFileDescriptor). */
export function fileDescriptor(text: string): { mode: FileMode; path: string } {
  const offset = text.startsWith('file(') ? 5 : text.startsWith('classpath(') ? 10 : 0;
  const body = text.slice(offset, text.lastIndexOf(')')).trim();
  let mode: FileMode = 'binary';
  let name = body;
  for (const m of ['text', 'json', 'binary', 'append'] as const) {
    if (body.startsWith(`${m}:`)) {
      mode = m;
      name = body.slice(m.length + 1);
      break;
    }
  }
  return { mode, path: name.startsWith('/') ? name : `/${name}` };
}

/** A constant form's Source, or null when `text` is no constant (DataMappingHelper.getConstantValue). */
export function parseConstant(text: string): Source | null {
  const last = text.lastIndexOf(')');
  if (last <= 0) return null;
  const body = (prefix: string) => text.slice(prefix.length, last);
  if (text.startsWith('text(')) return { type: 'constant', value: body('text(') };
  if (text.startsWith('int(')) return { type: 'constant', value: str2int(body('int(').trim()) };
  if (text.startsWith('long(')) return { type: 'constant', value: str2long(body('long(').trim()) };
  if (text.startsWith('float(')) return { type: 'constant', value: str2double(body('float(').trim()) };
  if (text.startsWith('double(')) return { type: 'constant', value: str2double(body('double(').trim()) };
  if (text.startsWith('boolean('))
    return { type: 'constant', value: body('boolean(').trim().toLowerCase() === 'true' };
  if (text.startsWith('map(')) return parseMapConstant(body('map(').trim());
  if (text.startsWith('file(') || text.startsWith('classpath(')) {
    return { type: 'file', ...fileDescriptor(text), classpath: text.startsWith('classpath(') };
  }
  return null;
}

function parseMapConstant(ref: string): Source {
  if (!ref.includes('=') && !ref.includes(',')) return { type: 'config', key: ref };
  const map: DataMap = {};
  for (const kv of splitOn(ref, ',')) {
    const eq = kv.indexOf('=');
    const k = (eq === -1 ? kv : kv.slice(0, eq)).trim();
    if (k !== '') map[k] = eq === -1 ? '' : kv.slice(eq + 1).trim();
  }
  return { type: 'constant', value: map };
}

/** A path-like LHS (model., input., result, `$.`, `f:`...): its Source (getLhsElement). */
export function parseLookup(text: string): Source {
  if (text.startsWith('$')) return { type: 'jsonPath', expression: text };
  const colon = text.startsWith('model.') ? text.indexOf(':') : -1;
  const selector = colon === -1 ? text : text.slice(0, colon).trim();
  if (selector.startsWith('f:')) return parsePlugin(selector);
  if (colon === -1) return { type: 'path', path: selector };
  return { type: 'path', path: selector, legacyType: text.slice(colon + 1).trim() };
}

/** An argument of a plugin call: a constant first, else a lookup; a nested `f:` is null. */
function parseArgument(text: string): Source {
  if (text.startsWith('f:')) return { type: 'null' };
  return parseConstant(text) ?? parseLookup(text);
}

function parsePlugin(selector: string): Source {
  const open = selector.indexOf('(');
  const close = selector.lastIndexOf(')');
  if (open <= 0 || close <= 0) return { type: 'constant', value: null };
  const name = selector.slice(2, open);
  const args = splitTopLevel(selector.slice(open + 1, close)).map((a) => parseArgument(a.trim()));
  return { type: 'plugin', name, text: selector, args };
}

/** Splits on commas outside parentheses (`text(,)` stays one argument). */
function splitTopLevel(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let part = '';
  for (const c of text) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (c === ',' && depth === 0) {
      out.push(part);
      part = '';
    } else {
      part += c;
    }
  }
  if (part !== '') out.push(part);
  return out;
}

// ---- reading ----

export interface ReadContext {
  readonly root: DataMap;
  readonly hooks: MappingHooks | undefined;
}

/**
 * The value of `source`. `built`: request data made the source (`{model.x}`), so a file path
 * outside its folders is the request's fault (400), not the flow's (500).
 */
export function readSource(source: Source, context: ReadContext, built = false): unknown {
  switch (source.type) {
    case 'constant':
      return deepCopy(source.value);
    case 'null':
      return null;
    case 'config':
      return context.hooks?.config?.(source.key) ?? null;
    case 'file':
      return readFile(source, context.hooks, built);
    case 'jsonPath': {
      const v = readJsonPath(context.root, source.expression);
      return v === NOT_FOUND ? null : v;
    }
    case 'plugin':
      return callPlugin(source, context, built);
    case 'path': {
      const value = getPath(context.root, source.path);
      return source.legacyType === undefined ? value : legacyConversion(source.legacyType, value, context);
    }
  }
}

/** True when the source is a path or JSON path that exists in the working set (even holding null). */
export function sourceExists(source: Source, root: DataMap): boolean {
  if (source.type === 'path') return lookup(root, source.path) !== NOT_FOUND;
  if (source.type === 'jsonPath') return readJsonPath(root, source.expression) !== NOT_FOUND;
  return false;
}

function readFile(
  source: Extract<Source, { type: 'file' }>,
  hooks: MappingHooks | undefined,
  built: boolean,
): unknown {
  const path = source.classpath
    ? resourcePath(source.path, hooks, built)
    : filePath(source.path, hooks, built);
  if (!existsSync(path) || !statSync(path).isFile()) return null;
  if (source.mode === 'text') return readFileSync(path, 'utf8');
  if (source.mode === 'json') return parseJsonFile(readFileSync(path, 'utf8'));
  return new Uint8Array(readFileSync(path));
}

/** A JSON object or array file is parsed; any other content stays text. */
function parseJsonFile(content: string): unknown {
  const json = content.trim();
  const wrapped =
    (json.startsWith('[') && json.endsWith(']')) || (json.startsWith('{') && json.endsWith('}'));
  if (!wrapped) return content;
  try {
    return JSON.parse(json);
  } catch {
    return content;
  }
}

function callPlugin(
  source: Extract<Source, { type: 'plugin' }>,
  context: ReadContext,
  built: boolean,
): unknown {
  const plugin = PLUGINS.get(source.name);
  if (plugin === undefined) {
    context.hooks?.warn?.(`SimplePlugin '${source.name}' not found`);
    throw new AppException(400, `Unable to process SimplePlugin: ${source.text}`);
  }
  const args = source.args.map((a) => readSource(a, context, built));
  const setConfig = context.hooks?.setConfig;
  return plugin(args, setConfig === undefined ? {} : { setConfig });
}

/**
 * The old `model.x:type` conversions, still reached for a suffix inside a plugin argument (the
 * load-time rewrite only touches the top-level operand) and for unknown suffixes (value unchanged).
 */
function legacyConversion(type: string, value: unknown, context: ReadContext): unknown {
  try {
    return legacyValue(type, value, context);
  } catch (e) {
    if (!(e instanceof AppException) || e.status !== 400) throw e;
    context.hooks?.warn?.(`Unable to do ${type} - ${e.message}`);
    return value;
  }
}

function legacyValue(type: string, value: unknown, context: ReadContext): unknown {
  const paren = type.indexOf('(');
  if (paren === -1) {
    switch (type) {
      case 'text':
        return textValue(value);
      case 'binary':
        return binaryValue(value);
      case 'boolean':
        return javaText(value).toLowerCase() === 'true';
      case '!':
        return javaText(value).toLowerCase() !== 'true';
      case 'int':
        return str2int(javaText(value));
      case 'long':
        return str2long(javaText(value));
      case 'float':
      case 'double':
        return str2double(javaText(value));
      case 'uuid':
        return randomUUID();
      case 'length':
        return lengthOf(value);
      case 'b64':
        return PLUGINS.get('b64')!([value], {});
      default:
        throw new AppException(
          400,
          'matching type must be substring(start, end), concat, boolean, !, and, or, text, binary, uuid or b64',
        );
    }
  }
  if (!type.endsWith(')')) throw new AppException(400, 'missing close bracket');
  const command = type.slice(paren + 1, -1).trim();
  const name = type.slice(0, paren);
  if (name === 'and' || name === 'or') {
    if (!command.startsWith('model.') || command.length <= 6) {
      throw new AppException(400, `'${command}' is not a model variable`);
    }
    const a = javaText(value) === 'true';
    const b = javaText(getPath(context.root, command)) === 'true';
    return name === 'and' ? a && b : a || b;
  }
  if (name === 'boolean') {
    const parts = splitOn(command, ',=')
      .map((p) => p.trim())
      .filter((p) => p !== '');
    if (parts.length === 0 || parts.length > 2)
      throw new AppException(400, `invalid syntax - got command: ${command}`);
    const condition = parts.length === 1 || parts[1]!.toLowerCase() === 'true';
    return javaText(value) === parts[0] ? condition : !condition;
  }
  if (name === 'substring') {
    const parts = splitOn(command, ', ');
    if (parts.length === 0 || parts.length > 2) throw new AppException(400, 'invalid syntax');
    if (typeof value !== 'string') throw new AppException(400, 'value is not a string');
    const start = str2int(parts[0]);
    const end = parts.length === 1 ? value.length : str2int(parts[1]);
    if (!(end > start && start >= 0 && end <= value.length))
      throw new AppException(400, 'index out of bound');
    return value.substring(start, end);
  }
  if (name === 'concat') {
    let out = javaText(value);
    for (const p of splitTopLevel(command).map((s) => s.trim())) {
      if (p.startsWith('text(')) out += p.slice(5, -1);
      else if (p.startsWith('model.')) out += javaText(getPath(context.root, p));
      else throw new AppException(400, 'parameters must be model variables and/or text constants');
    }
    return out;
  }
  throw new AppException(
    400,
    'matching type must be substring(start, end), concat, boolean, !, and, or, text, binary, uuid or b64',
  );
}

/** A map (deep) for `model.` writes; kept for symmetry with Mercury's setRhsElement. */
export function copyForModel(value: unknown): unknown {
  return isDataMap(value) || Array.isArray(value) ? deepCopy(value) : value;
}
