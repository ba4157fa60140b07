/**
 * Reads the rest.yaml files named by `yaml.rest.automation`, in order. YAML 1.2 with errors that
 * name the file, line and column; `${key:default}` in any string value is replaced from the
 * application properties. A file that cannot be read or parsed is skipped with an error.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import type { AppProperties } from './app-properties.ts';
import type { ProblemReport } from './problem-report.ts';

export interface RestFile {
  source: string;
  content: Record<string, unknown>;
}

export function loadRestFiles(
  paths: readonly string[],
  props: AppProperties,
  report: ProblemReport,
): RestFile[] {
  const files: RestFile[] = [];
  for (const path of paths) {
    if (!existsSync(path)) {
      report.warn(`Unable to load REST entries from ${path} - file not found`);
      continue;
    }
    const parsed = parseRestYaml(readFileSync(path, 'utf8'), path);
    if (typeof parsed === 'string') {
      report.error(parsed);
      continue;
    }
    files.push({ source: path, content: substituteAll(parsed, props) as Record<string, unknown> });
  }
  return files;
}

/** The document as plain data, or an error message naming file, line and column. */
export function parseRestYaml(text: string, source: string): Record<string, unknown> | string {
  const doc = parseDocument(text, { prettyErrors: true });
  const first = doc.errors[0];
  if (first) {
    const pos = first.linePos?.[0];
    const where = pos ? `${source}:${pos.line}:${pos.col}` : source;
    return `Unable to load REST entries from ${where} - ${first.message.split('\n')[0]}`;
  }
  const value: unknown = doc.toJS();
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    return `Unable to load REST entries from ${source} - the document must be a map of sections`;
  }
  return value as Record<string, unknown>;
}

function substituteAll(value: unknown, props: AppProperties): unknown {
  if (typeof value === 'string') return props.substitute(value);
  if (Array.isArray(value)) return value.map((v) => substituteAll(v, props));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteAll(v, props)]));
  }
  return value;
}
