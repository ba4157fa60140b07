/**
 * The `static-content` section: pages never cached by the browser, and the filter function in
 * front of selected paths (`filter.path` minus `filter.exclusion`, sent to `filter.service`).
 */
import { compilePathPatterns, type PathPredicate } from './path-pattern.ts';
import type { ProblemReport } from './problem-report.ts';
import type { SourcedEntry } from './rest-config-merge.ts';
import { checkAgainstSchema } from './rest-schema.ts';

export interface StaticContentConfig {
  noCache: PathPredicate;
  filter: { applies: PathPredicate; service: string } | undefined;
}

export const noStaticContentRules: StaticContentConfig = { noCache: () => false, filter: undefined };

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
  let noCache: PathPredicate = () => false;
  if (verdict.errors.some((e) => e.startsWith('no-cache-pages'))) {
    report.error(
      `static-content.no-cache-pages in ${entry.source} ignored - ${firstOf(verdict.errors, 'no-cache-pages')}`,
    );
  } else if (Array.isArray(noCachePages)) {
    noCache = compilePathPatterns(noCachePages as string[]);
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
      const paths = compilePathPatterns(rawFilter['path'] as string[]);
      const exclusions = compilePathPatterns((rawFilter['exclusion'] as string[] | undefined) ?? []);
      filter = { applies: (p) => paths(p) && !exclusions(p), service };
    }
  }
  return { noCache, filter };
}

function firstOf(errors: string[], prefix: string): string | undefined {
  return errors.find((e) => e.startsWith(prefix));
}
