/**
 * Type patterns by segment, so matching an event visits only the patterns that could match it: at
 * each segment of the type the literal child of that segment and the `*` child, and the `>` value
 * where one is. A pattern that does not match the event is never looked at, however many there are;
 * the nodes visited are at most 2^(segments+1) (each segment: its literal or `*`), and never more
 * than the trie holds (MAX_PATTERN_SEGMENTS bounds the first, MAX_TYPE_PATTERNS the second).
 */
import { ONE_SEGMENT, SEGMENTS_TO_THE_END, segmentsUpTo } from '@gatehouse/cloudevents';

class TrieNode<V> {
  literal: Map<string, TrieNode<V>> | undefined;
  any: TrieNode<V> | undefined;
  /** The value of the pattern that ends at this node with `>`. */
  rest: V | undefined;
  /** The value of the pattern that ends at this node. */
  value: V | undefined;

  get empty(): boolean {
    return (
      this.value === undefined &&
      this.rest === undefined &&
      this.any === undefined &&
      (this.literal === undefined || this.literal.size === 0)
    );
  }
}

export class TypeTrie<V> {
  private readonly root = new TrieNode<V>();
  private count = 0;
  /** Segments of the longest pattern ever set: no walk goes deeper, so no type is split further. */
  private depth = 0;

  /** Patterns held. */
  get size(): number {
    return this.count;
  }

  get(pattern: string): V | undefined {
    const { node, last } = this.find(pattern.split('.'));
    if (!node) return undefined;
    return last === SEGMENTS_TO_THE_END ? node.rest : node.value;
  }

  /** Sets the value of a well-formed pattern (typePatternProblem). */
  set(pattern: string, value: V): void {
    const segments = pattern.split('.');
    const last = segments.at(-1);
    this.depth = Math.max(this.depth, segments.length);
    let node = this.root;
    const path = last === SEGMENTS_TO_THE_END ? segments.slice(0, -1) : segments;
    for (const segment of path) node = child(node, segment);
    const had = last === SEGMENTS_TO_THE_END ? node.rest : node.value;
    if (had === undefined) this.count++;
    if (last === SEGMENTS_TO_THE_END) node.rest = value;
    else node.value = value;
  }

  delete(pattern: string): void {
    const segments = pattern.split('.');
    const rest = segments.at(-1) === SEGMENTS_TO_THE_END;
    const path = rest ? segments.slice(0, -1) : segments;
    const nodes: TrieNode<V>[] = [this.root];
    for (const segment of path) {
      const next = step(nodes.at(-1)!, segment);
      if (!next) return;
      nodes.push(next);
    }
    const node = nodes.at(-1)!;
    if ((rest ? node.rest : node.value) === undefined) return;
    if (rest) node.rest = undefined;
    else node.value = undefined;
    this.count--;
    prune(nodes, path);
  }

  /** Calls `visit` with the value of every pattern that matches `type`. */
  match(type: string, visit: (value: V) => void): void {
    if (this.count === 0) return;
    walk(this.root, segmentsUpTo(type, this.depth), 0, visit);
  }

  private find(segments: string[]): { node: TrieNode<V> | undefined; last: string | undefined } {
    const last = segments.at(-1);
    const path = last === SEGMENTS_TO_THE_END ? segments.slice(0, -1) : segments;
    let node: TrieNode<V> | undefined = this.root;
    for (const segment of path) {
      node = step(node, segment);
      if (!node) break;
    }
    return { node, last };
  }
}

function walk<V>(node: TrieNode<V>, segments: string[], i: number, visit: (value: V) => void): void {
  if (i === segments.length) {
    if (node.value !== undefined) visit(node.value);
    return;
  }
  if (node.rest !== undefined) visit(node.rest);
  const literal = node.literal?.get(segments[i]!);
  if (literal) walk(literal, segments, i + 1, visit);
  if (node.any) walk(node.any, segments, i + 1, visit);
}

function step<V>(node: TrieNode<V>, segment: string): TrieNode<V> | undefined {
  return segment === ONE_SEGMENT ? node.any : node.literal?.get(segment);
}

function child<V>(node: TrieNode<V>, segment: string): TrieNode<V> {
  const found = step(node, segment);
  if (found) return found;
  const made = new TrieNode<V>();
  if (segment === ONE_SEGMENT) node.any = made;
  else {
    node.literal ??= new Map();
    node.literal.set(segment, made);
  }
  return made;
}

/** Drops the nodes of a deleted pattern that lead nowhere any more, deepest first. */
function prune<V>(nodes: TrieNode<V>[], path: string[]): void {
  for (let i = nodes.length - 1; i > 0; i--) {
    if (!nodes[i]!.empty) return;
    const parent = nodes[i - 1]!;
    const segment = path[i - 1]!;
    if (segment === ONE_SEGMENT) parent.any = undefined;
    else parent.literal?.delete(segment);
  }
}
