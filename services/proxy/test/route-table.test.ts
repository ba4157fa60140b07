import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ApiDefinition } from '../src/api-definition.ts';
import { validateApi } from '../src/api-validation.ts';
import { compilePathRegex, compileReplacement } from '../src/path-regex.ts';
import { RouteTable } from '../src/route-table.ts';

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
  it('anchors the regex without doubling anchors the author wrote', () => {
    for (const source of ['/a/(.+)', '^/a/(.+)', '/a/(.+)$', '^/a/(.+)$']) {
      const compiled = compilePathRegex(source);
      assert.ok(compiled.ok);
      assert.ok(compiled.regex.test('/a/b'));
      assert.ok(!compiled.regex.test('/x/a/b'));
    }
    const escaped = compilePathRegex('/price\\$');
    assert.ok(escaped.ok && escaped.regex.test('/price$'));
  });

  it('matches case-sensitively unless the author asks for (?i:…)', () => {
    const plain = compilePathRegex('/admin');
    assert.ok(plain.ok && !plain.regex.test('/ADMIN'));
    const insensitive = compilePathRegex('/(?i:admin)');
    assert.ok(insensitive.ok && insensitive.regex.test('/ADMIN'));
  });

  it('rewrites with \\N groups and keeps other characters literal', () => {
    const regex = /^\/foo\/([^/]+)\/bar\/([^/]+)$/;
    const rewrite = compileReplacement('/bar/\\1/foo/\\2?x=$1');
    assert.equal(rewrite(regex.exec('/foo/a/bar/b')!), '/bar/a/foo/b?x=$1');
    assert.equal(
      compileReplacement('/mytables/\\1/\\2')(/^\/docs\/(\d+)\/tables\/(\d+)$/.exec('/docs/123/tables/456')!),
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
    assert.equal(table.matchEventTarget('/publish')?.route.endpoint.id, 'k');
  });
});
