/**
 * Loads every flow at start, as Mercury's CompileFlows does: the index files named by
 * `yaml.flow.automation` (env YAML_FLOW_AUTOMATION; default `classpath:/flows.yaml`; several
 * separated by commas), each listing flow files under its `location` (default
 * `classpath:/flows/`). Names are de-duplicated and sorted per index; a flow id already loaded is
 * refused; a bad index, file or flow is logged and skipped and never stops the caller.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { type DataMap, isDataMap, setPath } from '../mapping/data-path.ts';
import { splitOn } from '../mapping/java-text.ts';
import type { CompiledFlow } from './compiled-flow.ts';
import { compileFlow } from './compile-flow.ts';
import { FlowValidationError } from './flow-validation-error.ts';

export const FLOWS_PROPERTY = 'yaml.flow.automation';
export const FLOWS_ENV = 'YAML_FLOW_AUTOMATION';
const DEFAULT_INDEX = 'classpath:/flows.yaml';
const DEFAULT_LOCATION = 'classpath:/flows/';

export interface FlowLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface FlowLoaderOptions {
  /** Folder that `classpath:` (and prefix-less) locations resolve against: the app's config folder. */
  readonly configFolder: string;
  /**
   * The value of the `yaml.flow.automation` property: index locations, comma-separated (default
   * `classpath:/flows.yaml`). The environment variable YAML_FLOW_AUTOMATION, when set, wins.
   */
  readonly property?: string | undefined;
  /** Application configuration, for `${name}` references in flow files (after the environment). */
  readonly config?: (key: string) => unknown;
  /** Environment (default process.env): YAML_FLOW_AUTOMATION and `${NAME}` references. */
  readonly env?: NodeJS.ProcessEnv;
  readonly log?: FlowLog;
}

/** A problem found while loading, also logged: an unreadable index, a refused flow, a dropped task. */
export interface FlowLoadProblem {
  readonly kind: 'index' | 'file' | 'flow' | 'task';
  /** The index location or flow file name. */
  readonly file: string;
  readonly flow?: string;
  readonly task?: string;
  /** The logged line (Mercury's text). */
  readonly message: string;
}

export interface LoadedFlows {
  readonly flows: ReadonlyMap<string, CompiledFlow>;
  readonly problems: readonly FlowLoadProblem[];
}

const silent: FlowLog = { info() {}, warn() {}, error() {} };

export function loadFlows(options: FlowLoaderOptions): LoadedFlows {
  const env = options.env ?? process.env;
  const log = options.log ?? silent;
  const fromEnv = env[FLOWS_ENV]?.trim();
  const locations = fromEnv || options.property?.trim() || DEFAULT_INDEX;
  const flows = new Map<string, CompiledFlow>();
  const problems: FlowLoadProblem[] = [];
  const report = (problem: FlowLoadProblem, level: 'warn' | 'error') => {
    problems.push(problem);
    log[level](problem.message);
  };
  for (const index of splitOn(locations, ', ')) {
    let doc: DataMap;
    try {
      doc = readConfig(index, options);
    } catch (e) {
      report(
        { kind: 'index', file: index, message: `Unable to load Event Scripts from ${index} - ${reason(e)}` },
        'warn',
      );
      continue;
    }
    log.info(`Loading event scripts from ${index}`);
    const prefix = stringAt(doc, 'location') ?? DEFAULT_LOCATION;
    const list = doc['flows'];
    if (!Array.isArray(list)) continue;
    for (const name of uniqueFlowNames(list, log)) {
      loadOneFlow(prefix, name, flows, options, report, log);
    }
  }
  const ids = [...flows.keys()].sort();
  for (const id of ids) log.info(`Loaded ${id}`);
  log.info(`Event scripts deployed: ${ids.length}`);
  return { flows, problems };
}

function uniqueFlowNames(list: unknown[], log: FlowLog): string[] {
  const names = new Set<string>();
  for (const item of list) {
    const name = String(item);
    if (name.endsWith('.yml') || name.endsWith('.yaml')) names.add(name);
    else log.error(`Ignored ${name} because it does not have .yml or .yaml file extension`);
  }
  return [...names].sort();
}

function loadOneFlow(
  prefix: string,
  name: string,
  flows: Map<string, CompiledFlow>,
  options: FlowLoaderOptions,
  report: (p: FlowLoadProblem, level: 'warn' | 'error') => void,
  log: FlowLog,
): void {
  try {
    const doc = readConfig(prefix + name, options);
    log.info(`Parsing ${name}`);
    const flow = compileFlow(doc, name, {
      isLoaded: (id) => flows.has(id),
      dropTask: (message, task) => report({ kind: 'task', file: name, task, message }, 'error'),
      warn: (message) => log.warn(message),
    });
    flows.set(flow.id, flow);
  } catch (e) {
    const where = e instanceof FlowValidationError ? e : undefined;
    report(
      {
        kind: where === undefined ? 'file' : 'flow',
        file: name,
        ...(where?.flow === undefined ? {} : { flow: where.flow }),
        ...(where?.task === undefined ? {} : { task: where.task }),
        message: `Unable to parse ${name} - ${reason(e)}`,
      },
      'error',
    );
  }
}

function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function stringAt(doc: DataMap, key: string): string | undefined {
  const v = doc[key];
  return v === null || v === undefined ? undefined : String(v);
}

/**
 * A location as Mercury's ConfigReader reads it: `file:/p` (the file system; `file:p` relative to
 * the working directory), `classpath:/p` or a bare path (the resources folder). A `.yml` that is not
 * there is looked up as `.yaml` and the other way round.
 */
export function resolveFlowLocation(location: string, configFolder: string): string[] {
  let path: string;
  if (location.startsWith('file:')) {
    const file = location.slice('file:'.length);
    if (file.includes('../')) throw new Error('Relative parent file path not allowed');
    path = resolve(file);
  } else {
    const resource = location.startsWith('classpath:') ? location.slice('classpath:'.length) : location;
    path = join(configFolder, resource);
  }
  const yaml = /\.ya?ml$/.exec(path);
  if (yaml === null) return [path];
  const base = path.slice(0, yaml.index);
  return [path, yaml[0] === '.yml' ? `${base}.yaml` : `${base}.yml`];
}

/** The YAML at `location`, dotted keys expanded, `${...}` references resolved. */
export function readConfig(location: string, options: FlowLoaderOptions): DataMap {
  const path = resolveFlowLocation(location, options.configFolder).find((p) => existsSync(p));
  if (path === undefined) throw new Error(`${location} not found`);
  const raw = readFileSync(path, 'utf8');
  const data: unknown = parseYaml(raw.includes('\t') ? raw.replaceAll('\t', '  ') : raw);
  const resolver = referenceResolver(options);
  return isDataMap(data) ? (expand(data, resolver) as DataMap) : {};
}

/** Mercury re-keys a config file by its flattened paths: `first.task: x` equals `first: {task: x}`. */
function expand(value: unknown, resolver: (text: string) => string | null): unknown {
  if (typeof value === 'string') return resolver(value);
  if (Array.isArray(value)) return value.map((v) => expand(v, resolver));
  if (!isDataMap(value)) return value;
  const out: DataMap = {};
  for (const [k, v] of Object.entries(value)) {
    const expanded = expand(v, resolver);
    if (k.includes('.')) setPath(out, k, expanded);
    else out[k] = isDataMap(out[k]) && isDataMap(expanded) ? { ...out[k], ...expanded } : expanded;
  }
  return out;
}

/**
 * `${NAME}` / `${NAME:default}`: the environment variable, else the application property, else the
 * default, else nothing (a value made only of an unresolved reference becomes null), as ConfigReader.
 */
function referenceResolver(options: FlowLoaderOptions): (text: string) => string | null {
  const env = options.env ?? process.env;
  return (text) => {
    if (!text.includes('${')) return text;
    const out = text.replace(/\$\{([^}]*)\}/g, (_whole, middle: string) => {
      const statement = middle.trim();
      const colon = statement.indexOf(':');
      const name = colon > 0 ? statement.slice(0, colon) : statement;
      const fallback = colon > 0 ? statement.slice(colon + 1) : undefined;
      const configured = options.config?.(name);
      return (
        env[name] ??
        (configured === undefined || configured === null ? undefined : String(configured)) ??
        fallback ??
        ''
      );
    });
    return out === '' ? null : out;
  };
}
