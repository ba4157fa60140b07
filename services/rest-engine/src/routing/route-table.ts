/**
 * The compiled route table. Lookup order, segment by segment: literal, then `{name}` variable, then
 * `prefix*` (longest prefix first), then `*`, then a trailing wildcard that takes the rest of the
 * path; the first match that declares the request's method wins. So an exact url beats one with
 * variables, which beats a wildcard. Matching ignores the case of literals and empty segments
 * (trailing or double slashes): that is Mercury's rule and the spec's, kept on purpose. Paths
 * reach the table canonical (request-pipeline.ts: no dot segment, no `//`, no encoded `/`), so what
 * it folds is case and a trailing slash only; a proxy in front that checks tokens on a
 * case-sensitive match must fold them the same way when it decides (issue 34). Variable values keep
 * their case and are decoded per segment. A path that matches only with other methods is a 405.
 *
 * All-literal urls also sit in a map keyed by their normalised text, so the common request is one
 * `Map.get` without splitting the path.
 */
import { splitRequestPath, type UrlPattern } from './url-pattern.ts';
import { asciiLowerCase } from './ascii-case.ts';

export interface Routed {
  readonly url: UrlPattern;
  readonly methods: readonly string[];
}

export interface RouteFound<E> {
  kind: 'found';
  endpoint: E;
  /** Path variables by the names written in the url; undefined when there are none. */
  params: Record<string, string> | undefined;
}
/** The path is known but not with this method; `endpoints` are those declared at that path. */
export interface RouteMethodNotAllowed<E> {
  kind: 'method-not-allowed';
  endpoints: E[];
}
export type RouteLookup<E> =
  | RouteFound<E>
  | RouteMethodNotAllowed<E>
  | { kind: 'not-found' }
  | { kind: 'bad-path' };

const notFound = { kind: 'not-found' } as const;
const badPath = { kind: 'bad-path' } as const;

interface Terminal<E> {
  byMethod: Map<string, E>;
  /** Names of the `{name}` variables along the path, in order, with their segment index. */
  params: Array<{ name: string; index: number }>;
  endpoints: E[];
  /** Ready-made answers for an all-literal url (no variables), so a hit allocates nothing. */
  found: Map<string, RouteFound<E>>;
}

interface Node<E> {
  literal: Map<string, Node<E>>;
  param: Node<E> | undefined;
  prefixes: Array<{ prefix: string; node: Node<E> }>;
  star: Node<E> | undefined;
  tails: Array<{ prefix: string; terminal: Terminal<E> }>;
  terminal: Terminal<E> | undefined;
}

const newNode = <E>(): Node<E> => ({
  literal: new Map(),
  param: undefined,
  prefixes: [],
  star: undefined,
  tails: [],
  terminal: undefined,
});

export class RouteTable<E extends Routed> {
  private readonly root: Node<E> = newNode();
  private readonly exact = new Map<string, Terminal<E>>();
  private readonly size: number;

  /** Throws when two endpoints declare the same method on the same url. */
  constructor(endpoints: readonly E[]) {
    for (const e of endpoints) this.add(e);
    this.sortWildcards(this.root);
    this.size = endpoints.length;
  }

  get count(): number {
    return this.size;
  }

  lookup(method: string, path: string): RouteLookup<E> {
    const direct = this.exact.get(fastKey(path));
    if (direct !== undefined) {
      const found = direct.found.get(method);
      if (found !== undefined) return found;
    }
    const segments = splitRequestPath(path);
    if (segments === undefined) return badPath;
    const lower = segments.map(asciiLowerCase);
    const state: SearchState<E> = { method, lower, firstPathMatch: direct, hit: undefined };
    search(this.root, 0, state);
    if (state.hit !== undefined) {
      return {
        kind: 'found',
        endpoint: state.hit.byMethod.get(method)!,
        params: paramsOf(state.hit, segments),
      };
    }
    if (state.firstPathMatch !== undefined) {
      return { kind: 'method-not-allowed', endpoints: state.firstPathMatch.endpoints };
    }
    return notFound;
  }

  private add(endpoint: E): void {
    let node = this.root;
    const params: Array<{ name: string; index: number }> = [];
    const segments = endpoint.url.segments;
    let terminal: Terminal<E> | undefined;
    for (let i = 0; i < segments.length; i++) {
      const s = segments[i]!;
      const last = i === segments.length - 1;
      if (s.kind === 'literal') {
        node = child(node.literal, s.text);
      } else if (s.kind === 'param') {
        params.push({ name: s.name, index: i });
        node.param ??= newNode();
        node = node.param;
      } else if (last) {
        let tail = node.tails.find((t) => t.prefix === s.prefix);
        if (!tail) {
          tail = {
            prefix: s.prefix,
            terminal: { byMethod: new Map(), params, endpoints: [], found: new Map() },
          };
          node.tails.push(tail);
        }
        terminal = tail.terminal;
      } else if (s.prefix === '') {
        node.star ??= newNode();
        node = node.star;
      } else {
        let entry = node.prefixes.find((p) => p.prefix === s.prefix);
        if (!entry) {
          entry = { prefix: s.prefix, node: newNode() };
          node.prefixes.push(entry);
        }
        node = entry.node;
      }
    }
    if (terminal === undefined) {
      node.terminal ??= { byMethod: new Map(), params, endpoints: [], found: new Map() };
      terminal = node.terminal;
    }
    for (const method of endpoint.methods) {
      if (terminal.byMethod.has(method)) {
        throw new Error(`duplicated endpoint ${method} ${endpoint.url.normalised}`);
      }
      terminal.byMethod.set(method, endpoint);
      if (endpoint.url.exact)
        terminal.found.set(method, Object.freeze({ kind: 'found', endpoint, params: undefined }));
    }
    terminal.endpoints.push(endpoint);
    if (endpoint.url.exact) this.exact.set(endpoint.url.normalised, terminal);
  }

  private sortWildcards(node: Node<E>): void {
    node.prefixes.sort((a, b) => b.prefix.length - a.prefix.length);
    node.tails.sort((a, b) => b.prefix.length - a.prefix.length);
    for (const n of node.literal.values()) this.sortWildcards(n);
    for (const p of node.prefixes) this.sortWildcards(p.node);
    if (node.param) this.sortWildcards(node.param);
    if (node.star) this.sortWildcards(node.star);
  }
}

interface SearchState<E> {
  method: string;
  lower: string[];
  /** The first terminal whose path matched, for the 405 answer. */
  firstPathMatch: Terminal<E> | undefined;
  hit: Terminal<E> | undefined;
}

/** Depth-first in priority order; stops at the first terminal that has the method. */
function search<E>(node: Node<E>, i: number, state: SearchState<E>): boolean {
  const { lower } = state;
  if (i === lower.length) return node.terminal !== undefined && accept(node.terminal, state);
  const segment = lower[i]!;
  const lit = node.literal.get(segment);
  if (lit && search(lit, i + 1, state)) return true;
  if (node.param && search(node.param, i + 1, state)) return true;
  for (const p of node.prefixes) {
    if (segment.startsWith(p.prefix) && search(p.node, i + 1, state)) return true;
  }
  if (node.star && search(node.star, i + 1, state)) return true;
  for (const t of node.tails) {
    if (segment.startsWith(t.prefix) && accept(t.terminal, state)) return true;
  }
  return false;
}

function accept<E>(terminal: Terminal<E>, state: SearchState<E>): boolean {
  state.firstPathMatch ??= terminal;
  if (!terminal.byMethod.has(state.method)) return false;
  state.hit = terminal;
  return true;
}

function paramsOf<E>(terminal: Terminal<E>, segments: string[]): Record<string, string> | undefined {
  if (terminal.params.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const p of terminal.params) out[p.name] = segments[p.index]!;
  return out;
}

function child<E>(map: Map<string, Node<E>>, key: string): Node<E> {
  let node = map.get(key);
  if (!node) {
    node = newNode();
    map.set(key, node);
  }
  return node;
}

/** The exact-map key of a request path; paths with escapes or odd slashes take the slow path. */
function fastKey(path: string): string {
  const lower = asciiLowerCase(path);
  return lower.length > 1 && lower.endsWith('/') ? lower.replace(/\/+$/, '') : lower;
}
