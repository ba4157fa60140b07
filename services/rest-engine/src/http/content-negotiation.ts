/**
 * Which of JSON, XML or HTML the caller prefers, from its Accept header, by the `negotiator`
 * package (RFC 9110 rules: quality, then the more specific range, then the order given); the
 * any-type wildcard, `application/*` and an Accept that names none of them mean JSON. Results are
 * memoised per header value because clients repeat the same few Accept lines (the hot path then
 * pays one Map lookup, not a parse).
 */
import Negotiator from 'negotiator';

export type Format = 'json' | 'xml' | 'html';

const memo = new Map<string, Format>();
const memoLimit = 256;

export function preferredFormat(accept: string | undefined): Format {
  if (accept === undefined || accept === '') return 'json';
  const known = memo.get(accept);
  if (known !== undefined) return known;
  const format = negotiate(accept);
  if (memo.size >= memoLimit) memo.clear();
  memo.set(accept, format);
  return format;
}

/** The media types the engine renders, each with its format; the first is the default. */
const offered: ReadonlyArray<readonly [string, Format]> = [
  ['application/json', 'json'],
  ['application/xml', 'xml'],
  ['text/html', 'html'],
  ['application/xhtml+xml', 'html'],
  ['text/xml', 'xml'],
];
const offeredTypes = offered.map(([type]) => type);
const formatOfType = new Map(offered);

function negotiate(accept: string): Format {
  const type = new Negotiator({ headers: { accept } }).mediaType(offeredTypes);
  return (type === undefined ? undefined : formatOfType.get(type)) ?? 'json';
}

export const contentTypeOf: Record<Format, string> = {
  json: 'application/json',
  xml: 'application/xml',
  html: 'text/html; charset=utf-8',
};
