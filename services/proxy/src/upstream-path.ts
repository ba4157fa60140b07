/**
 * The path and query string a matched request goes to on its HTTP target: the request path, or
 * `path_replacement` applied to the match (always absolute), followed by the request's query.
 */
import type { RouteMatch } from './route-table.ts';

export function upstreamPath({ route, match }: RouteMatch, path: string, url: string): string {
  let upstream = route.rewrite === undefined ? path : route.rewrite(match);
  if (upstream.charCodeAt(0) !== 47) upstream = `/${upstream}`;
  return upstream + url.slice(path.length);
}
