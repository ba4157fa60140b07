/**
 * The `static-content` section: pages never cached by the browser, and the filter function in
 * front of selected paths (`filter.path` minus `filter.exclusion`, sent to `filter.service`).
 *
 * The rules decide on the file served, given as every path that serves it (static-files.ts
 * `servedPaths`: `/about.html` and `/about`), never on the request's spelling: a pattern that names
 * the file by any of them applies, and an exclusion that names it by any of them excludes it. So a
 * rule written for `/about`, `/about.html`, `/docs/` or `/docs/index.html` holds for every request
 * that gets that file.
 */
import { compilePathPatterns, type PathPredicate } from './path-pattern.ts';
import { checkAgainstSchema, type ProblemReport, type SourcedEntry } from '../config/index.ts';

/** Decides on a file by the paths that serve it. */
export type FileRule = (servedPaths: readonly string[]) => boolean;

export interface StaticContentConfig {
  noCache: FileRule;
  filter: { applies: FileRule; service: string } | undefined;
}

export const noStaticContentRules: StaticContentConfig = { noCache: () => false, filter: undefined };

const anyOf =
  (predicate: PathPredicate): FileRule =>
  (paths) =>
    paths.some(predicate);

export function compileStaticContent(
  entry: SourcedEntry | undefined,
  routeExists: (route: string) => boolean,
  report: ProblemReport,
): StaticContentConfig {
  if (!entry) return noStaticContentRules;
  const verdict = checkAgainstSchema('staticContent', entry.value);
  if (verdict.unknownKeys.length) {
    report.warn(`static-content in ${entry.source}: unknown keys ignored: ${verdict.unknownKeys.join(', ')}`);
  }
  const value = (entry.value ?? {}) as Record<string, unknown>;
  const noCachePages = value['no-cache-pages'];
  let noCache: FileRule = () => false;
  if (verdict.errors.some((e) => e.startsWith('no-cache-pages'))) {
    report.error(
      `static-content.no-cache-pages in ${entry.source} ignored - ${firstOf(verdict.errors, 'no-cache-pages')}`,
    );
  } else if (Array.isArray(noCachePages)) {
    noCache = anyOf(compilePathPatterns(noCachePages as string[]));
  }
  let filter: StaticContentConfig['filter'];
  const rawFilter = value['filter'] as Record<string, unknown> | undefined;
  if (rawFilter !== undefined) {
    const problem = firstOf(verdict.errors, 'filter');
    const service = String(rawFilter['service'] ?? '')
      .trim()
      .toLowerCase();
    if (problem) {
      report.error(`static-content.filter in ${entry.source} ignored - ${problem}`);
    } else if (!routeExists(service)) {
      report.error(`static-content.filter in ${entry.source} ignored - service ${service} not available`);
    } else {
      const paths = anyOf(compilePathPatterns(rawFilter['path'] as string[]));
      const exclusions = anyOf(compilePathPatterns((rawFilter['exclusion'] as string[] | undefined) ?? []));
      filter = { applies: (served) => paths(served) && !exclusions(served), service };
    }
  }
  return { noCache, filter };
}

function firstOf(errors: string[], prefix: string): string | undefined {
  return errors.find((e) => e.startsWith(prefix));
}
