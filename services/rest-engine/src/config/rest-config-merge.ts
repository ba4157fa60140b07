/**
 * Merges the rest.yaml files in the order they were listed. `cors` and `headers` sets are keyed by
 * id and a later `static-content` section replaces an earlier one, each with a warning. The same
 * method on the same url declared twice, within one file or across files, aborts the rendering of
 * every REST endpoint, with an error that names the duplicate and the file.
 */
import type { ProblemReport } from './problem-report.ts';
import type { RestFile } from './rest-yaml-loader.ts';
import { parseUrlPattern } from '../routing/index.ts';

export interface SourcedEntry {
  value: unknown;
  source: string;
  /** Position in its file's section, for messages. */
  index: number;
}

export interface MergedRestConfig {
  rest: SourcedEntry[];
  cors: Map<string, SourcedEntry>;
  headers: Map<string, SourcedEntry>;
  staticContent: SourcedEntry | undefined;
  /** Set when a duplicated endpoint aborted the rendering of all endpoints. */
  aborted: string | undefined;
}

export function mergeRestFiles(files: readonly RestFile[], report: ProblemReport): MergedRestConfig {
  const merged: MergedRestConfig = {
    rest: [],
    cors: new Map(),
    headers: new Map(),
    staticContent: undefined,
    aborted: undefined,
  };
  const seenEndpoints = new Map<string, string>();
  for (const { source, content } of files) {
    const staticContent = content['static-content'];
    if (staticContent !== undefined) {
      if (merged.staticContent) {
        report.warn(
          `Duplicated 'static-content' in ${source} will override a prior one in ${merged.staticContent.source}`,
        );
      }
      merged.staticContent = { value: staticContent, source, index: 0 };
    }
    mergeSets('cors', content['cors'], source, merged.cors, report);
    mergeSets('headers', content['headers'], source, merged.headers, report);
    const rest = content['rest'];
    if (rest === undefined) continue;
    if (!Array.isArray(rest)) {
      report.error(
        `'rest' section in ${source} must be a list of endpoint entries (url, service, methods, timeout...)`,
      );
      continue;
    }
    for (const [index, value] of rest.entries()) {
      for (const { key, label } of endpointKeys(value)) {
        const prior = seenEndpoints.get(key);
        if (prior !== undefined && merged.aborted === undefined) {
          const where = prior === source ? source : `${source} (first declared in ${prior})`;
          merged.aborted = `REST endpoint rendering aborted due to duplicated entry '${label}' in ${where}`;
        }
        seenEndpoints.set(key, source);
      }
      merged.rest.push({ value, source, index });
    }
  }
  if (merged.aborted) {
    report.error(merged.aborted);
    merged.rest = [];
  }
  return merged;
}

function mergeSets(
  section: 'cors' | 'headers',
  value: unknown,
  source: string,
  into: Map<string, SourcedEntry>,
  report: ProblemReport,
): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) {
    report.error(`'${section}' section in ${source} must be a list of entries with an id`);
    return;
  }
  for (const [index, entry] of value.entries()) {
    const id = (entry as Record<string, unknown> | null)?.['id'];
    if (typeof id !== 'string' || id.trim() === '') {
      report.error(`Skip invalid ${section} entry ${section}[${index}] in ${source} - missing id`);
      continue;
    }
    if (into.has(id)) report.warn(`Duplicated '${section}' in ${source} will override a prior one '${id}'`);
    into.set(id, { value: entry, source, index });
  }
}

/**
 * `GET /api/{}` style keys of an entry, one per method, with variable names blanked so that
 * `/a/{id}` and `/a/{name}` count as the same endpoint. Entries too broken to key are left to the
 * compiler, which reports them.
 */
function endpointKeys(entry: unknown): Array<{ key: string; label: string }> {
  if (typeof entry !== 'object' || entry === null) return [];
  const { url, methods } = entry as Record<string, unknown>;
  if (typeof url !== 'string' || !Array.isArray(methods)) return [];
  let shape: string;
  try {
    const pattern = parseUrlPattern(url);
    shape = `/${pattern.segments.map((s) => (s.kind === 'literal' ? s.text : s.kind === 'param' ? '{}' : `${s.prefix}*`)).join('/')}`;
  } catch {
    return [];
  }
  const upper = new Set(
    methods.filter((m): m is string => typeof m === 'string').map((m) => m.toUpperCase()),
  );
  upper.delete('OPTIONS');
  return [...upper].map((m) => ({ key: `${m} ${shape}`, label: `${m} ${url}` }));
}
