/**
 * Which secured endpoint a request's path may reach by another spelling. The proxy matches the
 * canonical path case-sensitively, but a target may read it more loosely: the REST engine (like
 * Mercury and many servers) ignores case and a trailing slash, so `/x/Echo/1/` is its `/x/echo/1`.
 * If such a spelling is matched by an open endpoint while the secured one is what the target
 * serves for it, the target would serve the secured resource without a token.
 *
 * The rule: the table is read a second time with case ignored and a trailing slash either way; a
 * request needs a token when the endpoint it matches needs one, or when the first endpoint of that
 * loose reading does. It only ever adds a check; an open endpoint listed before a secured one
 * still shadows it for every spelling. The request still goes where it matched, so what the target
 * receives is the path that was checked.
 */
import { compilePathRegex, type PathPattern } from '../definitions/index.ts';

export interface LooseRoute {
  /** The endpoint's regex with case ignored; undefined when only the exact one compiles. */
  loose: PathPattern | undefined;
}

export function looseRegex(source: string): PathPattern | undefined {
  const compiled = compilePathRegex(source, { ignoreCase: true });
  return compiled.ok ? compiled.regex : undefined;
}

/** The first route, in table order, that some loose spelling of the path matches. */
export function looseMatch<R extends LooseRoute>(routes: readonly R[], path: string): R | undefined {
  const other = path.endsWith('/') ? (path.length > 1 ? path.slice(0, -1) : undefined) : `${path}/`;
  for (const route of routes) {
    if (route.loose === undefined) continue;
    if (route.loose.match(path) !== undefined) return route;
    if (other !== undefined && route.loose.match(other) !== undefined) return route;
  }
  return undefined;
}
