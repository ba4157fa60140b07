import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ApiDefinition } from '../../src/definitions/api-definition.ts';
import { validateApi } from '../../src/definitions/api-validation.ts';
import { compilePathRegex, compileReplacement } from '../../src/definitions/path-regex.ts';
import { RouteTable } from '../../src/routing/route-table.ts';

function api(
  id: string,
  endpoints: unknown[],
  proxy: unknown = { target_url: 'svc', port: 80 },
): ApiDefinition {
  const result = validateApi(
    { id, name: id, version_data: { default: { endpoints } }, proxy },
    { env: { HOSTVAR: 'http://from-env' } },
  );
  assert.ok(result.ok, JSON.stringify(result));
  return result.api;
}

describe('path_regex and path_replacement', () => {
  const matches = (source: string, path: string) => {
    const compiled = compilePathRegex(source);
    assert.ok(compiled.ok, JSON.stringify(compiled));
    return compiled.regex.match(path) !== undefined;
  };

  it('anchors the regex without doubling anchors the author wrote', () => {
    for (const source of ['/a/(.+)', '^/a/(.+)', '/a/(.+)$', '^/a/(.+)$']) {
      assert.ok(matches(source, '/a/b'));
      assert.ok(!matches(source, '/x/a/b'));
    }
    assert.ok(matches('/price\\$', '/price$'));
  });

  it('matches case-sensitively unless the author asks for (?i:…) or a leading (?i)', () => {
    assert.ok(!matches('/admin', '/ADMIN'));
    assert.ok(matches('/(?i:admin)', '/ADMIN'));
    assert.ok(matches('(?i)/admin', '/ADMIN'));
  });

  it('gives the groups of a match, undefined for a group that took no part', () => {
    const compiled = compilePathRegex('/a/(x)?(b)');
    assert.ok(compiled.ok);
    assert.deepEqual(compiled.regex.match('/a/b'), ['/a/b', undefined, 'b']);
    assert.equal(compiled.regex.match('/a/c'), undefined);
  });

  it('refuses what a linear-time engine cannot run, naming the construct', () => {
    for (const [source, feature] of [
      ['/a(?=b)', 'lookahead'],
      ['/a(?!b)', 'lookahead'],
      ['(?<=/a)/b', 'lookbehind'],
      ['(?<!/a)/b', 'lookbehind'],
      ['/(a)/\\1', 'backreferences'],
      ['/(?>a+)', 'atomic groups'],
      ['/a++', 'possessive quantifiers'],
    ]) {
      const compiled = compilePathRegex(source!);
      assert.ok(!compiled.ok, source);
      assert.match(
        compiled.error,
        new RegExp(`^${feature} is not supported \\(path_regex is matched in linear time`),
      );
    }
    const broken = compilePathRegex('/(');
    assert.ok(!broken.ok);
    assert.match(broken.error, /missing closing \)/);
  });

  it('rewrites with \\N groups and keeps other characters literal', () => {
    const foo = compilePathRegex('/foo/([^/]+)/bar/([^/]+)');
    assert.ok(foo.ok);
    const rewrite = compileReplacement('/bar/\\1/foo/\\2?x=$1');
    assert.equal(rewrite(foo.regex.match('/foo/a/bar/b')!), '/bar/a/foo/b?x=$1');
    const docs = compilePathRegex('/docs/(\\d+)/tables/(\\d+)');
    assert.ok(docs.ok);
    assert.equal(
      compileReplacement('/mytables/\\1/\\2')(docs.regex.match('/docs/123/tables/456')!),
      '/mytables/123/456',
    );
  });
});

describe('RouteTable', () => {
  it('takes the first matching endpoint, APIs ordered by id, endpoints as listed', () => {
    const { table } = RouteTable.build([
      api('b', [{ id: 'b1', method: 'GET', path_regex: '/x/.*' }]),
      api('a', [
        { id: 'a1', method: 'GET', path_regex: '/x/special' },
        { id: 'a2', method: 'GET', path_regex: '/x/.*' },
      ]),
    ]);
    assert.equal(table.match('GET', '/x/special')?.route.endpoint.id, 'a1');
    assert.equal(table.match('GET', '/x/other')?.route.endpoint.id, 'a2');
    assert.equal(table.match('POST', '/x/other'), undefined);
  });

  it('lets HEAD use a GET endpoint when no HEAD endpoint matches', () => {
    const { table } = RouteTable.build([
      api('a', [
        { id: 'get', method: 'GET', path_regex: '/r' },
        { id: 'head', method: 'HEAD', path_regex: '/h' },
      ]),
    ]);
    assert.equal(table.match('HEAD', '/r')?.route.endpoint.id, 'get');
    assert.equal(table.match('HEAD', '/h')?.route.endpoint.id, 'head');
  });

  it('resolves target origins, from use_env too, and leaves out what it cannot serve', () => {
    const { table, problems } = RouteTable.build(
      [
        api('a', [{ id: 'e', method: 'GET', path_regex: '/e' }], {
          target_url: 'HOSTVAR',
          port: 9000,
          use_env: true,
        }),
      ],
      { HOSTVAR: 'https://backend.example' },
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(table.match('GET', '/e')?.route.origin, {
      origin: 'https://backend.example:9000',
      host: 'backend.example:9000',
    });
    const missing = RouteTable.build(
      [
        api('a', [{ id: 'e', method: 'GET', path_regex: '/e' }], {
          target_url: 'HOSTVAR',
          port: 9000,
          use_env: true,
        }),
      ],
      {},
    );
    assert.equal(missing.table.size, 0);
    assert.match(missing.problems[0]!.problem, /HOSTVAR, which is not set or not in PROXY_USE_ENV_ALLOWED/);
  });

  it('finds event endpoints by path for CORS preflights', () => {
    const { table } = RouteTable.build([
      api('a', [{ id: 'k', method: 'POST', path_regex: '/publish', target: 'kafka', topic: 't' }]),
    ]);
    assert.equal(table.match('OPTIONS', '/publish'), undefined);
    assert.equal(table.matchPreflightTarget('/publish')?.route.endpoint.id, 'k');
  });
});

describe('the token check of other spellings (secured-spellings.ts)', () => {
  const secured = (id: string, path_regex: string) => ({ id, method: 'GET', path_regex, secured: true });
  const open = (id: string, path_regex: string) => ({ id, method: 'GET', path_regex });
  const jwtApi = (id: string, endpoints: unknown[]) => {
    const result = validateApi(
      {
        id,
        name: id,
        auth_type: 'jwt',
        version_data: { default: { endpoints } },
        proxy: { target_url: 'svc', port: 80 },
      },
      { env: {} },
    );
    assert.ok(result.ok, JSON.stringify(result));
    return result.api;
  };
  const guardOf = (table: RouteTable, path: string, method = 'GET') =>
    table.match(method, path)?.guard?.endpoint.id;

  it("asks for the secured endpoint's token when a spelling a case-folding target reads as it matches an open one", () => {
    const { table } = RouteTable.build([
      jwtApi('a', [secured('echo', '/x/echo/(.*)'), open('rest', '/x/(.*)')]),
    ]);
    assert.equal(guardOf(table, '/x/echo/1'), 'echo');
    for (const path of ['/x/Echo/1', '/x/ECHO/1', '/x/eCHo/22/']) {
      assert.equal(table.match('GET', path)?.route.endpoint.id, 'rest', path);
      assert.equal(guardOf(table, path), 'echo', path);
    }
    assert.equal(guardOf(table, '/x/other/1'), undefined);
    assert.equal(table.match('GET', '/X/echo/1'), undefined, 'no endpoint: 404, nothing forwarded');
    assert.equal(guardOf(table, '/x/Echo/1', 'HEAD'), 'echo');
  });

  it('reads a trailing slash either way', () => {
    const { table } = RouteTable.build([jwtApi('a', [secured('s', '/x/secret'), open('rest', '/x/(.*)')])]);
    assert.equal(guardOf(table, '/x/secret/'), 's');
    assert.equal(guardOf(table, '/x/SECRET/'), 's');
    const slashed = RouteTable.build([jwtApi('a', [secured('s', '/y/'), open('rest', '/y(.*)')])]).table;
    assert.equal(guardOf(slashed, '/y'), 's');
  });

  it('keeps an open endpoint listed first open for every spelling: it only ever adds a check', () => {
    const { table } = RouteTable.build([
      jwtApi('a', [open('public', '/public/(.*)'), secured('all', '/(.*)')]),
    ]);
    assert.equal(guardOf(table, '/public/a'), undefined);
    assert.equal(guardOf(table, '/public/a/'), undefined);
    assert.equal(guardOf(table, '/Public/a'), 'all', 'matched by the secured endpoint itself');
    assert.equal(guardOf(table, '/private'), 'all');
  });
});
