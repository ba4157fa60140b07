/**
 * An endpoint url from rest.yaml, parsed into segments: literals (compared lower-cased), `{name}`
 * path variables, `prefix*` wildcards that match one segment, and a trailing `*` / `prefix*` that
 * also takes every further segment.
 */
import { asciiLowerCase } from './ascii-case.ts';
export type UrlSegment =
  | { kind: 'literal'; text: string }
  | { kind: 'param'; name: string }
  | { kind: 'wildcard'; prefix: string };

export interface UrlPattern {
  /** Normalised form: lower-cased literals, no empty segments, `/` for the root. */
  normalised: string;
  segments: UrlSegment[];
  /** True when no segment is a variable or a wildcard. */
  exact: boolean;
  /** True when the last segment is a wildcard, so longer paths match too. */
  tail: boolean;
}

export function parseUrlPattern(url: string): UrlPattern {
  const path = url.split('?', 1)[0]!;
  if (!path.startsWith('/')) throw new Error(`url must start with '/', actual: ${url}`);
  const parts = path
    .split('/')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const segments = parts.map(parseSegment);
  const last = segments.at(-1);
  return {
    normalised: `/${segments.map(segmentText).join('/')}`,
    segments,
    exact: segments.every((s) => s.kind === 'literal'),
    tail: last?.kind === 'wildcard',
  };
}

function parseSegment(text: string): UrlSegment {
  const hasBrace = text.includes('{') || text.includes('}');
  const hasStar = text.includes('*');
  if (hasBrace && hasStar)
    throw new Error(`wildcard url segment must not mix arguments with *, actual: ${text}`);
  if (hasBrace) {
    const name = /^\{([^{}]+)\}$/.exec(text)?.[1]?.trim();
    if (!name) throw new Error(`argument url segment must be enclosed by curly brackets, actual: ${text}`);
    return { kind: 'param', name };
  }
  if (hasStar) {
    if (text.indexOf('*') !== text.length - 1) {
      throw new Error(`wildcard url segment must end with a single *, actual: ${text}`);
    }
    return { kind: 'wildcard', prefix: asciiLowerCase(text.slice(0, -1)) };
  }
  return { kind: 'literal', text: asciiLowerCase(text) };
}

function segmentText(s: UrlSegment): string {
  if (s.kind === 'literal') return s.text;
  if (s.kind === 'param') return `{${asciiLowerCase(s.name)}}`;
  return `${s.prefix}*`;
}

/**
 * Splits a request path into decoded segments, ignoring empty ones (trailing and double slashes).
 * The path is canonical (request-pipeline.ts), so its only escapes are of reserved and non-ASCII
 * bytes, never of `/`, `\` or `.`: decoding a segment cannot make a new segment or a dot segment,
 * and the segments are those the proxy in front matched. Returns undefined for a malformed escape
 * (a path that did not come through the pipeline).
 */
export function splitRequestPath(path: string): string[] | undefined {
  const out: string[] = [];
  for (const raw of path.split('/')) {
    if (raw === '') continue;
    if (!raw.includes('%')) {
      out.push(raw);
      continue;
    }
    try {
      out.push(decodeURIComponent(raw));
    } catch {
      return undefined;
    }
  }
  return out;
}
