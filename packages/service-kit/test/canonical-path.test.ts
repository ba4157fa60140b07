import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { canonicalPath, canonicalTarget } from '../src/canonical-path.ts';

function path(raw: string): string {
  const c = canonicalPath(raw);
  assert.ok(c.ok, `${raw}: ${c.ok ? '' : c.reason}`);
  return c.path;
}

function refused(raw: string): string {
  const c = canonicalPath(raw);
  assert.ok(!c.ok, `${raw} should be refused, got ${c.ok ? c.path : ''}`);
  return c.reason;
}

describe('canonicalPath', () => {
  it('leaves an ordinary path as it is', () => {
    for (const p of [
      '/',
      '/a',
      '/a/b/',
      '/api/hello/world',
      '/a/.hidden',
      '/a/b;c=d',
      '/a..b',
      '/%C3%A9t%C3%A9',
    ])
      assert.equal(path(p), p);
  });

  it('decodes unreserved escapes and upper-cases the others', () => {
    assert.equal(path('/x/%65cho/1'), '/x/echo/1');
    assert.equal(path('/%41%7a%30%2D%2e%5F%7E'), '/Az0-._~');
    assert.equal(path('/a%3fb%3Fc'), '/a%3Fb%3Fc');
    assert.equal(path('/%c3%a9'), '/%C3%A9');
    assert.equal(path('/a%20b'), '/a%20b');
  });

  it('merges slashes and removes dot segments, after decoding', () => {
    assert.equal(path('/x//echo/1'), '/x/echo/1');
    assert.equal(path('//x///echo//'), '/x/echo/');
    assert.equal(path('/x/a/../echo/1'), '/x/echo/1');
    assert.equal(path('/x/./echo'), '/x/echo');
    assert.equal(path('/x/%2e%2e/echo'), '/echo');
    assert.equal(path('/x/.%2E/echo'), '/echo');
    assert.equal(path('/../../etc/passwd'), '/etc/passwd');
    assert.equal(path('/a/b/..'), '/a/');
    assert.equal(path('/a/.'), '/a/');
    assert.equal(path('/..'), '/');
  });

  it('keeps case', () => {
    assert.equal(path('/x/Echo/1'), '/x/Echo/1');
  });

  it('refuses what cannot be made canonical unambiguously', () => {
    for (const p of [
      '/a%2fb',
      '/a%2Fb',
      '/a%5cb',
      '/a%5Cb',
      '/a\\b',
      '/\\evil.example/',
      '/a%00b',
      '/a%zz',
      '/a%4',
      '/a%',
      '/%C0%AF',
      '/%C0%AE%C0%AE/',
      '/%E0%80%AE',
      '/%C3',
      '/%C3x%A9',
      '/%FF',
      '/a b',
      '/a\tb',
      '/a#b',
      '/caf\u00e9',
      'http://evil.example/',
      '*',
      '',
    ])
      refused(p);
  });

  it('keeps %2F and %5C encoded in their segment when the policy says so, and still refuses NUL', () => {
    const keep = { encodedSlashes: 'keep' } as const;
    assert.deepEqual(canonicalPath('/v3/session-blacklist/user%2f42%20s%5c', keep), {
      ok: true,
      path: '/v3/session-blacklist/user%2F42%20s%5C',
    });
    assert.deepEqual(canonicalPath('/a/..%2f..%2fb', keep), { ok: true, path: '/a/..%2F..%2Fb' });
    assert.equal(canonicalPath('/a%00', keep).ok, false);
    assert.equal(canonicalPath('/a\\b', keep).ok, false);
  });

  it('splits a target into the canonical path and the query as sent', () => {
    assert.deepEqual(canonicalTarget('/x/%65cho/../a?q=%2F..&b'), {
      ok: true,
      path: '/x/a',
      query: '?q=%2F..&b',
    });
    assert.deepEqual(canonicalTarget('/x'), { ok: true, path: '/x', query: '' });
    assert.equal(canonicalTarget('/a%2f?x').ok, false);
  });
});

/** Paths built from the characters and escapes attackers use. */
const pathPart = fc.constantFrom(
  '/',
  '//',
  '.',
  '..',
  '/./',
  '/../',
  'a',
  'B',
  'echo',
  '%2e',
  '%2E',
  '%65',
  '%41',
  '%25',
  '%252e',
  '%3F',
  '%20',
  '%C3%A9',
  ';p=1',
  '~',
  '-',
  '_',
  '%7e',
);
const target = fc.array(pathPart, { maxLength: 12 }).map((parts) => `/${parts.join('')}`);

describe('canonicalPath properties', () => {
  it('is idempotent', () => {
    fc.assert(
      fc.property(target, (raw) => {
        const once = canonicalPath(raw);
        if (!once.ok) return;
        assert.deepEqual(canonicalPath(once.path), once);
      }),
      { numRuns: 2_000 },
    );
  });

  it('never emits a dot segment, an empty segment or an unreserved escape', () => {
    fc.assert(
      fc.property(target, (raw) => {
        const c = canonicalPath(raw);
        if (!c.ok) return;
        const segments = c.path.split('/').slice(1);
        const inner = c.path.endsWith('/') ? segments.slice(0, -1) : segments;
        for (const s of inner) {
          assert.notEqual(s, '', c.path);
          assert.notEqual(s, '.', c.path);
          assert.notEqual(s, '..', c.path);
        }
        assert.doesNotMatch(c.path, /%(?:[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9]|2[DEde]|5[Ff]|7[Ee])/, c.path);
      }),
      { numRuns: 2_000 },
    );
  });

  it('decodes once: the decoded canonical path equals the decoded raw path after dot removal', () => {
    fc.assert(
      fc.property(target, (raw) => {
        const c = canonicalPath(raw);
        if (!c.ok) return;
        // Decoding the canonical path once gives what decoding the raw path once gives, up to
        // dot and empty segments: nothing was decoded twice (`%252e` must not become `.`).
        assert.equal(decodeSegments(c.path), decodeSegments(raw));
      }),
      { numRuns: 2_000 },
    );
  });

  it('accepts any path of unreserved characters and slashes, and keeps its segments', () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9_~-]{1,8}$/);
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 6 }), (segments) => {
        assert.equal(path(`/${segments.join('//')}`), `/${segments.join('/')}`);
      }),
    );
  });
});

/** Every segment decoded once, with dot and empty segments removed (the reference reading). */
function decodeSegments(p: string): string {
  const out: string[] = [];
  for (const raw of p.split('/')) {
    const s = decodeURIComponent(raw);
    if (s === '' || s === '.') continue;
    if (s === '..') out.pop();
    else out.push(s);
  }
  return out.join('/');
}
