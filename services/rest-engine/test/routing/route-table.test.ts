import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RouteTable } from '../../src/routing/route-table.ts';
import { parseUrlPattern } from '../../src/routing/url-pattern.ts';

interface E {
  name: string;
  url: ReturnType<typeof parseUrlPattern>;
  methods: string[];
}
const e = (name: string, methods: string[], url: string): E => ({ name, methods, url: parseUrlPattern(url) });

function table(...endpoints: E[]) {
  const t = new RouteTable(endpoints);
  return (method: string, path: string) => {
    const r = t.lookup(method, path);
    if (r.kind === 'found') return { name: r.endpoint.name, params: r.params };
    if (r.kind === 'method-not-allowed') return 405;
    return r.kind;
  };
}

describe('url pattern', () => {
  it('normalises case, slashes and the query placeholder', () => {
    const p = parseUrlPattern('/API//Users/{Id}/?a=_');
    assert.equal(p.normalised, '/api/users/{id}');
    assert.deepEqual(p.segments[2], { kind: 'param', name: 'Id' });
    assert.equal(p.exact, false);
    assert.equal(parseUrlPattern('/').normalised, '/');
    assert.equal(parseUrlPattern('/a/b*').tail, true);
  });

  it('rejects malformed segments', () => {
    assert.throws(() => parseUrlPattern('/a/{id'), /curly brackets/);
    assert.throws(() => parseUrlPattern('/a/x{id}'), /curly brackets/);
    assert.throws(() => parseUrlPattern('/a/{id}*'), /must not mix/);
    assert.throws(() => parseUrlPattern('/a/*b'), /single \*/);
    assert.throws(() => parseUrlPattern('a/b'), /start with/);
  });
});

describe('route table', () => {
  const match = table(
    e('me', ['GET'], '/api/users/me'),
    e('byId', ['GET'], '/api/users/{id}'),
    e('anyUser', ['DELETE'], '/api/users/*'),
    e('files', ['GET'], '/files/*'),
    e('docs', ['GET'], '/docs/v*'),
    e('two', ['GET'], '/orders/{orderId}/items/{itemId}'),
    e('mid', ['GET'], '/a/*/c'),
    e('root', ['GET'], '/'),
  );

  it('prefers exact urls, then variables, then wildcards', () => {
    assert.deepEqual(match('GET', '/api/users/me'), { name: 'me', params: undefined });
    assert.deepEqual(match('GET', '/api/users/42'), { name: 'byId', params: { id: '42' } });
    assert.deepEqual(match('DELETE', '/api/users/42'), { name: 'anyUser', params: undefined });
  });

  it('falls back from an exact url to a pattern that has the method', () => {
    assert.deepEqual(match('DELETE', '/api/users/me'), { name: 'anyUser', params: undefined });
  });

  it('ignores case, trailing and double slashes, and keeps the case of values', () => {
    assert.deepEqual(match('GET', '/API/Users/ME/'), { name: 'me', params: undefined });
    assert.deepEqual(match('GET', '/api//users/Ann'), { name: 'byId', params: { id: 'Ann' } });
    assert.deepEqual(match('GET', '/Orders/A1/items/b2'), {
      name: 'two',
      params: { orderId: 'A1', itemId: 'b2' },
    });
  });

  it('decodes each segment on its own', () => {
    assert.deepEqual(match('GET', '/api/users/a%2Fb'), { name: 'byId', params: { id: 'a/b' } });
    assert.equal(match('GET', '/api/users/%E0%A4%A'), 'bad-path');
  });

  it('lets a trailing wildcard take more segments but not fewer', () => {
    assert.deepEqual(match('GET', '/files/a/b/c'), { name: 'files', params: undefined });
    assert.equal(match('GET', '/files'), 'not-found');
    assert.deepEqual(match('GET', '/docs/v2/intro'), { name: 'docs', params: undefined });
    assert.equal(match('GET', '/docs/latest'), 'not-found');
  });

  it('matches a wildcard in the middle with exactly one segment', () => {
    assert.deepEqual(match('GET', '/a/b/c'), { name: 'mid', params: undefined });
    assert.equal(match('GET', '/a/b/x/c'), 'not-found');
  });

  it('answers 405 for a known path with another method and 404 for unknown paths', () => {
    assert.equal(match('PUT', '/api/users/42'), 405);
    assert.equal(match('HEAD', '/api/users/me'), 405);
    assert.equal(match('GET', '/api/other'), 'not-found');
    assert.deepEqual(match('GET', '/'), { name: 'root', params: undefined });
  });

  it('refuses the same method on the same url twice', () => {
    assert.throws(
      () => new RouteTable([e('a', ['GET'], '/x/{a}'), e('b', ['GET', 'POST'], '/X/{b}/')]),
      /duplicated endpoint GET/,
    );
  });

  it('does not slow down with many routes (a 200-route table still finds its match)', () => {
    const many = Array.from({ length: 200 }, (_, i) =>
      e(`r${i}`, ['GET'], `/api/v1/resource${i}/{id}/sub/{subId}`),
    );
    const t = table(...many);
    assert.deepEqual(t('GET', '/api/v1/resource150/7/sub/9'), {
      name: 'r150',
      params: { id: '7', subId: '9' },
    });
  });
});
