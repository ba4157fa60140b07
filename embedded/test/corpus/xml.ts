/** XML bodies to the REST engine: entity bombs, deep, wide and attribute-heavy documents. */
import { type CorpusCase, clientErrors, withLength } from './corpus-case.ts';

function post(name: string, text: string): CorpusCase {
  const body = Buffer.from(text);
  const headers = { 'content-type': 'application/xml' };
  return {
    kind: 'http',
    via: 'edge',
    name: `XML: ${name}`,
    head: withLength('POST /api/echo/1 HTTP/1.1', headers, body),
    body,
    statuses: clientErrors,
  };
}

function laughs(): string {
  const entities = ['<!ENTITY lol0 "lol">'];
  for (let i = 1; i < 10; i++) entities.push(`<!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`);
  return `<?xml version="1.0"?><!DOCTYPE lolz [${entities.join('')}]><lolz>&lol9;</lolz>`;
}

export const xmlCases: CorpusCase[] = [
  post('billion laughs', laughs()),
  post(
    'quadratic blow-up',
    `<!DOCTYPE r [<!ENTITY a "${'a'.repeat(9_000)}">]><r>${'&a;'.repeat(50_000)}</r>`,
  ),
  post('external entity', '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>'),
  post('2,000 levels deep', `${'<a>'.repeat(2_000)}${'</a>'.repeat(2_000)}`),
  post('100,000 elements', `<r>${'<a>1</a>'.repeat(100_000)}</r>`),
  post(
    '50,000 attributes on one element',
    `<r ${Array.from({ length: 50_000 }, (_, i) => `a${i}="1"`).join(' ')}/>`,
  ),
];
