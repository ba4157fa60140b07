/**
 * Event type patterns: what a subscription may name instead of one type. A type is read as segments
 * split on `.`; in a pattern a segment that is exactly `*` matches any one segment (even an empty
 * one) and a last segment that is exactly `>` matches one or more segments. So
 * `com.example.orders.*` matches `com.example.orders.created` but not `com.example.orders` nor
 * `com.example.orders.eu.created`, which `com.example.orders.>` matches. `*` and `>` are wildcards
 * only as whole segments: `orders*` or `a.>.b` are no pattern and no type either. An event type that
 * holds either character is refused at publish, so no event can read as a pattern and no pattern
 * is ambiguous (NATS subjects, whose wildcards these are, make the same rule).
 */
import { type CloudEventProblem, problem } from './errors.ts';

export const ONE_SEGMENT = '*';
export const SEGMENTS_TO_THE_END = '>';

/** Whether `type` is a pattern: one of its segments is a wildcard (it may still be malformed). */
export function isTypePattern(type: string): boolean {
  return type.includes(ONE_SEGMENT) || type.includes(SEGMENTS_TO_THE_END);
}

/** What makes `pattern` unusable as a subscription's type pattern; undefined when it is one. */
export function typePatternProblem(pattern: string, maxSegments: number): string | undefined {
  const segments = pattern.split('.');
  if (segments.length > maxSegments)
    return `pattern "${short(pattern)}" has ${segments.length} segments, at most ${maxSegments} (MAX_PATTERN_SEGMENTS)`;
  for (const [i, segment] of segments.entries()) {
    if (segment === ONE_SEGMENT) continue;
    if (segment === SEGMENTS_TO_THE_END) {
      if (i === segments.length - 1) continue;
      return `pattern "${short(pattern)}": ">" may only be the last segment`;
    }
    if (isTypePattern(segment))
      return `pattern "${short(pattern)}": "*" and ">" are wildcards only as a whole segment between dots`;
  }
  return undefined;
}

/**
 * Whether `type` matches `pattern` (a well-formed one). The reference for the index's trie: it
 * splits both every time, the index never does this per subscription.
 */
export function typeMatches(pattern: string, type: string): boolean {
  const want = pattern.split('.');
  const have = segmentsUpTo(type, want.length);
  for (const [i, segment] of want.entries()) {
    if (segment === SEGMENTS_TO_THE_END) return have.length > i;
    if (i >= have.length) return false;
    if (segment !== ONE_SEGMENT && segment !== have[i]) return false;
  }
  return want.length === have.length;
}

/**
 * Whether every type `inner` matches is matched by `outer` (both a type or a well-formed
 * pattern): what a token allowing `outer` may subscribe to. Segment by segment: `>` in `outer`
 * takes whatever `inner` has left (at least one segment), `*` takes one segment that is not `>`,
 * a literal only itself.
 */
export function patternCovers(outer: string, inner: string): boolean {
  const o = outer.split('.');
  const n = segmentsUpTo(inner, o.length);
  for (const [i, segment] of o.entries()) {
    if (segment === SEGMENTS_TO_THE_END) return n.length > i;
    if (i >= n.length) return false;
    if (segment === ONE_SEGMENT) {
      if (n[i] === SEGMENTS_TO_THE_END) return false;
    } else if (segment !== n[i]) return false;
  }
  return o.length === n.length;
}

/**
 * The first `depth + 1` segments of `type`: all a pattern of `depth` segments can look at (the one
 * past them tells "longer" from "as long"). An event's type is bounded only by the event's bytes, so
 * a type of a megabyte of dots split whole is a million strings per pattern tested; cut here, what
 * matching costs depends on the pattern, never on the type.
 */
export function segmentsUpTo(type: string, depth: number): string[] {
  return type.split('.', depth + 1);
}

/** Why a producer may not publish an event of this type: it holds a wildcard character. */
export function wildcardTypeProblems(event: { type?: unknown }): CloudEventProblem[] {
  if (typeof event.type !== 'string' || !isTypePattern(event.type)) return [];
  return [
    problem(
      'type',
      'wildcard',
      `'type' ${JSON.stringify(short(event.type))} holds "*" or ">": they are the wildcards of subscription patterns, so an event type may not contain them`,
    ),
  ];
}

function short(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
