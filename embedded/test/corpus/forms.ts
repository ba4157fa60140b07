/** url-encoded forms and query strings to the REST engine. */
import { type CorpusCase, clientErrors, head, withLength } from './corpus-case.ts';

const form = Buffer.from('a=1&'.repeat(100_000));
const sameKey = Buffer.from('k=v&'.repeat(100_000));
const formType = { 'content-type': 'application/x-www-form-urlencoded' };

export const formCases: CorpusCase[] = [
  {
    kind: 'http',
    via: 'edge',
    name: 'form: 100,000 parameters',
    head: withLength('POST /api/echo/1 HTTP/1.1', formType, form),
    body: form,
    statuses: clientErrors,
  },
  {
    kind: 'http',
    via: 'edge',
    name: 'form: one key 100,000 times',
    head: withLength('POST /api/echo/1 HTTP/1.1', formType, sameKey),
    body: sameKey,
    statuses: clientErrors,
  },
  {
    kind: 'http',
    via: 'rest',
    name: 'query: 3,000 parameters',
    head: head(`GET /api/echo/1?${'q=1&'.repeat(3_000)} HTTP/1.1`),
    statuses: clientErrors,
  },
  {
    kind: 'http',
    via: 'edge',
    name: 'query: 3,000 parameters through the edge',
    head: head(`GET /api/echo/1?${'q=1&'.repeat(3_000)} HTTP/1.1`),
    statuses: clientErrors,
  },
];
