/**
 * Application properties: `application.yml` (or `.yaml`) and `application.properties` in the
 * service's config folder, nested YAML keys flattened to dotted names. Every property can be
 * overridden by an environment variable named by upper-casing it and turning `.` and `-` into `_`
 * (`rest.server.port` → `REST_SERVER_PORT`). Values may refer to other properties as `${key}` or
 * `${key:default}`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';

export function envNameOf(key: string): string {
  return key.toUpperCase().replace(/[.-]/g, '_');
}

export class AppProperties {
  private readonly values: ReadonlyMap<string, string>;
  private readonly env: NodeJS.ProcessEnv;
  /** Files the properties came from, for the start-up log. */
  readonly sources: readonly string[];

  constructor(values: ReadonlyMap<string, string>, env: NodeJS.ProcessEnv, sources: readonly string[] = []) {
    this.values = values;
    this.env = env;
    this.sources = sources;
  }

  /** The environment override, else the file's value (with `${…}` references resolved). */
  get(key: string): string | undefined {
    const fromEnv = this.env[envNameOf(key)];
    if (fromEnv !== undefined && fromEnv.trim() !== '') return fromEnv.trim();
    const raw = this.values.get(key);
    return raw === undefined ? undefined : this.substitute(raw);
  }

  /** Replaces `${key}` / `${key:default}` with property values; unknown keys without default stay. */
  substitute(text: string, depth = 0): string {
    if (!text.includes('${') || depth > 5) return text;
    return text.replace(
      /\$\{([^}:]+)(?::([^}]*))?\}/g,
      (whole, key: string, fallback: string | undefined) => {
        const name = key.trim();
        const fromEnv = this.env[envNameOf(name)];
        if (fromEnv !== undefined && fromEnv.trim() !== '') return fromEnv.trim();
        const raw = this.values.get(name);
        if (raw !== undefined) return this.substitute(raw, depth + 1);
        return fallback ?? whole;
      },
    );
  }

  /** Every key the files define, for tests and diagnostics. */
  keys(): string[] {
    return [...this.values.keys()];
  }
}

export function loadAppProperties(folder: string, env: NodeJS.ProcessEnv): AppProperties {
  const values = new Map<string, string>();
  const sources: string[] = [];
  const propertiesFile = join(folder, 'application.properties');
  if (existsSync(propertiesFile)) {
    for (const [k, v] of parseProperties(readFileSync(propertiesFile, 'utf8'))) values.set(k, v);
    sources.push(propertiesFile);
  }
  for (const name of ['application.yml', 'application.yaml']) {
    const file = join(folder, name);
    if (!existsSync(file)) continue;
    const doc: unknown = parseYaml(readFileSync(file, 'utf8'));
    flatten(doc, '', values);
    sources.push(file);
    break;
  }
  return new AppProperties(values, env, sources);
}

/** `key=value` or `key: value` lines; `#` and `!` start comments. */
export function parseProperties(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const at = line.search(/[=:]/);
    if (at <= 0) continue;
    out.set(line.slice(0, at).trim(), line.slice(at + 1).trim());
  }
  return out;
}

/** Nested maps become dotted keys; lists become comma-joined values and indexed keys `a[0]`. */
export function flatten(value: unknown, prefix: string, out: Map<string, string>): void {
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v !== 'object' || v === null)) out.set(prefix, value.join(','));
    value.forEach((v, i) => {
      flatten(v, `${prefix}[${i}]`, out);
    });
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (prefix !== '' && value !== null && value !== undefined) {
    out.set(prefix, String(value));
  }
}
