/**
 * The compiled form of every API definition, rebuilt (once) on each change: per method, the
 * endpoints in a fixed order — APIs by id, endpoints as listed — with their anchored regexes, path
 * rewriters and target origins resolved. A request takes the first endpoint whose regex matches its
 * path. RIG's order was whatever its tracker returned; ours is stable across replicas and restarts.
 *
 * HEAD also matches GET endpoints when no HEAD endpoint does (RIG turned every HEAD into a GET, so
 * a HEAD endpoint could never match; here both work).
 */
import {
  type ApiDefinition,
  compilePathRegex,
  compileReplacement,
  type Endpoint,
  type PathMatch,
  type PathPattern,
} from '../definitions/index.ts';
import { requiresToken } from './jwt-guard.ts';
import { looseMatch, looseRegex } from './secured-spellings.ts';
import { type TargetOrigin, targetOrigin } from './target-origin.ts';

export interface Route {
  api: ApiDefinition;
  endpoint: Endpoint;
  regex: PathPattern;
  /** The forwarded path for a match; undefined: the request path itself. */
  rewrite: ((match: PathMatch) => string) | undefined;
  /** Where an HTTP endpoint forwards to. */
  origin: TargetOrigin | undefined;
  /** Headers merged over the request's when the endpoint transforms headers. */
  addHeaders: Record<string, string> | undefined;
  /** Its regex with case ignored (secured-spellings.ts). */
  loose: PathPattern | undefined;
}

export interface RouteMatch {
  route: Route;
  match: PathMatch;
  /**
   * The endpoint whose token check the request must pass: its own when it is secured, else a
   * secured endpoint another spelling of the path reaches (secured-spellings.ts), else none.
   */
  guard: Route | undefined;
}

export interface RouteProblem {
  apiId: string;
  endpointId: string;
  problem: string;
}

export class RouteTable {
  readonly size: number;
  private readonly byMethod: Map<string, Route[]>;
  /** Methods with a secured endpoint: only their requests need the loose reading. */
  private readonly securedMethods: Set<string>;
  private readonly all: Route[];

  private constructor(routes: Route[]) {
    this.all = routes;
    this.size = routes.length;
    this.byMethod = new Map();
    this.securedMethods = new Set();
    for (const route of routes) {
      append(this.byMethod, route.endpoint.method, route);
      if (requiresToken(route.api, route.endpoint)) this.securedMethods.add(route.endpoint.method);
    }
  }

  static empty(): RouteTable {
    return new RouteTable([]);
  }

  /**
   * Compiles the definitions; an endpoint that cannot be compiled here (a `use_env` variable unset
   * on this replica) is left out and reported, the others still work.
   */
  static build(
    apis: Iterable<ApiDefinition>,
    env: NodeJS.ProcessEnv = {},
  ): { table: RouteTable; problems: RouteProblem[] } {
    const routes: Route[] = [];
    const problems: RouteProblem[] = [];
    const sorted = [...apis].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const api of sorted) {
      for (const endpoint of api.version_data.default.endpoints) {
        const route = compileRoute(api, endpoint, env);
        if (typeof route === 'string')
          problems.push({ apiId: api.id, endpointId: endpoint.id, problem: route });
        else routes.push(route);
      }
    }
    return { table: new RouteTable(routes), problems };
  }

  match(method: string, path: string): RouteMatch | undefined {
    let found = firstMatch(this.byMethod.get(method), path);
    let as = method;
    if (found === undefined && method === 'HEAD') {
      found = firstMatch(this.byMethod.get('GET'), path);
      as = 'GET';
    }
    if (found === undefined) return undefined;
    return { ...found, guard: this.guardOf(found.route, as, path) };
  }

  /** The secured endpoint whose token the request needs (secured-spellings.ts). */
  private guardOf(route: Route, method: string, path: string): Route | undefined {
    if (requiresToken(route.api, route.endpoint)) return route;
    if (!this.securedMethods.has(method)) return undefined;
    const loose = looseMatch(this.byMethod.get(method) ?? [], path);
    return loose !== undefined && requiresToken(loose.api, loose.endpoint) ? loose : undefined;
  }

  /**
   * Some endpoint whose CORS preflights the proxy answers has this path, whatever its method: one
   * publishing events, or a secured one (cors.ts).
   */
  matchPreflightTarget(path: string): RouteMatch | undefined {
    for (const route of this.all) {
      if (route.endpoint.target === 'http' && !requiresToken(route.api, route.endpoint)) continue;
      const match = route.regex.match(path);
      if (match) return { route, match, guard: undefined };
    }
    return undefined;
  }

  routes(): readonly Route[] {
    return this.all;
  }
}

function firstMatch(routes: Route[] | undefined, path: string): Omit<RouteMatch, 'guard'> | undefined {
  if (routes === undefined) return undefined;
  for (const route of routes) {
    const match = route.regex.match(path);
    if (match) return { route, match };
  }
  return undefined;
}

function append<V>(map: Map<string, V[]>, key: string, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

function compileRoute(api: ApiDefinition, endpoint: Endpoint, env: NodeJS.ProcessEnv): Route | string {
  const compiled = compilePathRegex(endpoint.path_regex);
  if (!compiled.ok) return `path_regex does not compile: ${compiled.error}`;
  let origin: TargetOrigin | undefined;
  if (endpoint.target === 'http') {
    if (api.proxy === undefined) return 'no proxy settings for an HTTP endpoint';
    const resolved = targetOrigin(api.proxy, env);
    if (typeof resolved === 'string') return resolved;
    origin = resolved;
  }
  return {
    api,
    endpoint,
    regex: compiled.regex,
    rewrite:
      endpoint.path_replacement === undefined ? undefined : compileReplacement(endpoint.path_replacement),
    origin,
    addHeaders: endpoint.transform_request_headers
      ? api.version_data.default.transform_request_headers?.add_headers
      : undefined,
    loose: looseRegex(endpoint.path_regex),
  };
}
