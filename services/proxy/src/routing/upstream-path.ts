/**
 * The path and query string a matched request goes to on its HTTP target: the request's canonical
 * path, or `path_replacement` applied to the match, followed by the request's query. The result is
 * made canonical again (canonical-path.ts): a replacement such as `/\1` of a captured `/host:port/`
 * would otherwise start with `//`, which a URL parser reads as another host. It is only ever
 * appended to the configured origin, never resolved against it.
 */
import { canonicalPath } from '@gatehouse/service-kit';
import type { RouteMatch } from './route-table.ts';

/** The upstream path and query, or undefined when the rewritten path cannot be made canonical. */
export function upstreamPath({ route, match }: RouteMatch, path: string, url: string): string | undefined {
  if (route.rewrite === undefined) return path + url.slice(path.length);
  const rewritten = route.rewrite(match);
  const canonical = canonicalPath(rewritten.charCodeAt(0) === 47 ? rewritten : `/${rewritten}`);
  return canonical.ok ? canonical.path + url.slice(path.length) : undefined;
}
