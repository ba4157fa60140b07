import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AuthSettings } from '../../src/definitions/api-definition.ts';
import { withoutCredentials } from '../../src/events/event-credentials.ts';

const noAuth: AuthSettings = { use_header: false, header_name: '', use_query: false, query_name: '' };
const data = {
  method: 'POST',
  path: '/orders',
  query: 'jwt=secret&page=2&x=a%20b',
  headers: {
    authorization: 'Bearer a',
    'proxy-authorization': 'Basic b',
    cookie: 'c=1',
    'set-cookie': 'd=2',
    'x-token': 'secret',
    'content-type': 'application/json',
  },
};

describe('withoutCredentials', () => {
  it('drops the credential headers and keeps the others and the query', () => {
    const out = withoutCredentials(data, noAuth);
    assert.deepEqual(out.headers, { 'x-token': 'secret', 'content-type': 'application/json' });
    assert.equal(out.query, data.query);
    assert.equal(out.path, '/orders');
    assert.equal(data.headers.authorization, 'Bearer a', 'the request data itself is untouched');
  });

  it("drops the API's own token header and query parameter, leaving the other parameters as sent", () => {
    const auth = { use_header: true, header_name: 'X-Token', use_query: true, query_name: 'jwt' };
    const out = withoutCredentials(data, auth);
    assert.deepEqual(out.headers, { 'content-type': 'application/json' });
    assert.equal(out.query, 'page=2&x=a%20b');
    assert.equal(withoutCredentials({ query: 'j%77t=s&jwt&a=1' }, auth).query, 'a=1');
    assert.equal(withoutCredentials({ query: '' }, auth).query, '');
  });
});
