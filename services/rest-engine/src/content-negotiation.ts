/**
 * Which of JSON, XML or HTML the caller prefers, from its Accept header: the supported type with the
 * highest quality wins, ties go to the one listed first; the any-type wildcard and `application/*`
 * mean JSON.
 * Results are memoised per header value because clients repeat the same few Accept lines.
 */
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

function negotiate(accept: string): Format {
  let best: Format = 'json';
  let bestQ = -1;
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const format = formatOf(type);
    if (format === undefined) continue;
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (Number.isFinite(q) && q > bestQ) {
      best = format;
      bestQ = q;
    }
  }
  return best;
}

function formatOf(type: string): Format | undefined {
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (type === 'application/xml' || type === 'text/xml' || type.endsWith('+xml')) return 'xml';
  if (type === 'application/json' || type.endsWith('+json') || type === '*/*' || type === 'application/*') {
    return 'json';
  }
  return undefined;
}

export const contentTypeOf: Record<Format, string> = {
  json: 'application/json',
  xml: 'application/xml',
  html: 'text/html; charset=utf-8',
};
