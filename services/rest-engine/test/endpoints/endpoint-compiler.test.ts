import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileEndpoints } from '../../src/endpoints/endpoint-compiler.ts';
import { CollectingReport } from '../../src/config/problem-report.ts';
import { mergeRestFiles } from '../../src/config/rest-config-merge.ts';

function compile(content: Record<string, unknown>) {
  const report = new CollectingReport();
  const merged = mergeRestFiles([{ source: 'rest.yaml', content }], report);
  const endpoints = compileEndpoints(merged, {
    routeExists: (r) => ['hello.world', 'v1.auth', 'audit.log', 'http.flow.adapter'].includes(r),
    reservedRoutes: new Set(['async.http.response']),
    traceIdHeader: 'X-Trace-Id',
    correlationIdHeader: 'X-Correlation-Id',
    traceparentHeader: 'traceparent',
    report,
  });
  return { endpoints, report };
}

const cors = [
  { id: 'c1', options: ['Access-Control-Allow-Origin: *'], headers: ['Access-Control-Allow-Origin: *'] },
];

describe('endpoint compiler', () => {
  it('compiles a complete entry', () => {
    const { endpoints, report } = compile({
      cors,
      headers: [{ id: 'h1', request: { drop: ['X-A'] } }],
      rest: [
        {
          service: ['Hello.World', 'audit.log'],
          methods: ['GET', 'POST', 'OPTIONS'],
          url: '/api/{Id}',
          timeout: '5s',
          cors: 'c1',
          headers: 'h1',
          authentication: 'v1.auth',
          tracing: true,
          'correlation.id.header': 'X-Req-Id',
        },
      ],
    });
    assert.deepEqual(report.errors, []);
    const e = endpoints[0]!;
    assert.equal(e.primary, 'hello.world');
    assert.deepEqual(e.secondaries, ['audit.log']);
    assert.deepEqual(e.methods, ['GET', 'POST']);
    assert.equal(e.timeoutMs, 5000);
    assert.equal(e.cors?.id, 'c1');
    assert.ok(e.headers?.request?.drop.has('x-a'));
    assert.deepEqual(e.authentication, { kind: 'route', route: 'v1.auth' });
    assert.equal(e.tracing, true);
    assert.equal(e.correlationIdHeader, 'x-req-id');
    assert.equal(e.traceIdHeader, 'x-trace-id');
  });

  it('skips invalid entries with an error naming the entry and the reason, keeping the others; an unregistered route is only a warning', () => {
    const { endpoints, report } = compile({
      rest: [
        { service: 'hello.world', methods: ['GET'], url: '/ok' },
        { service: 'hello.world', url: '/no-methods' },
        { service: 'hello.world', methods: ['FETCH'], url: '/bad-method' },
        { service: 'no.such', methods: ['GET'], url: '/unknown-route' },
        { service: 'hello.world', methods: ['GET'], url: '/c', cors: 'missing' },
        { service: 'hello.world', methods: ['GET'], url: '/t', timeout: 'soon' },
        { service: 'hello.world', methods: ['GET'], url: '/a/{x' },
        { service: 'hello.world', methods: ['GET'], url: '/auth', authentication: 'nobody.home' },
        { service: 'async.http.response', methods: ['GET'], url: '/reserved' },
      ],
    });
    assert.deepEqual(
      endpoints.map((e) => e.label),
      ['GET /ok', 'GET /unknown-route', 'GET /auth'],
    );
    const errors = report.errors.join('\n');
    const warnings = report.warnings.join('\n');
    assert.match(
      errors,
      /rest\[1\] \(\? \/no-methods\) in rest\.yaml - entry must have required property 'methods'/,
    );
    assert.match(errors, /rest\[2\] \(FETCH \/bad-method\).*must be equal to one of the allowed values/);
    assert.match(warnings, /rest\[3\].*service no\.such has no function: requests answer 503/);
    assert.match(errors, /rest\[4\].*cors ID missing is not found/);
    assert.match(errors, /rest\[5\].*timeout/);
    assert.match(errors, /rest\[6\].*curly brackets/);
    assert.match(warnings, /rest\[7\].*authentication service nobody\.home has no function/);
    assert.match(errors, /rest\[8\].*reserved/);
  });

  it('warns about unknown keys without skipping the entry', () => {
    const { endpoints, report } = compile({
      rest: [{ service: 'hello.world', methods: ['GET'], url: '/x', method: 'POST' }],
    });
    assert.equal(endpoints.length, 1);
    assert.match(report.warnings[0]!, /unknown keys, ignored: method/);
  });

  it('reads timeouts with the shared duration parser: units, or a bare number of milliseconds, at least 1s', () => {
    const { endpoints, report } = compile({
      rest: [
        { service: 'hello.world', methods: ['GET'], url: '/a', timeout: '1500ms' },
        { service: 'hello.world', methods: ['GET'], url: '/b', timeout: 20000 },
        { service: 'hello.world', methods: ['GET'], url: '/c', timeout: '2m' },
        { service: 'hello.world', methods: ['GET'], url: '/d' },
        { service: 'hello.world', methods: ['GET'], url: '/mercury-seconds', timeout: 20 },
        { service: 'hello.world', methods: ['GET'], url: '/too-short', timeout: '250ms' },
        { service: 'hello.world', methods: ['GET'], url: '/zero', timeout: '0s' },
      ],
    });
    assert.deepEqual(
      endpoints.map((e) => e.timeoutMs),
      [1500, 20_000, 120_000, 30_000],
    );
    assert.equal(report.errors.length, 3, report.errors.join('\n'));
    assert.match(
      report.errors[0]!,
      /\/mercury-seconds.* timeout 20 must be at least 1s, got 20ms \(a bare number is milliseconds\); write 20s for 20 seconds/,
    );
    assert.match(report.errors[1]!, /timeout "250ms" must be at least 1s, got 250ms$/);
    assert.match(report.errors[2]!, /timeout "0s" must be at least 1s/);
  });

  it('compiles header-based authentication rules and relays', () => {
    const { endpoints, report } = compile({
      rest: [
        {
          service: 'hello.world',
          methods: ['GET'],
          url: '/r',
          authentication: ['x-app: demo: v1.auth', 'default: hello.world'],
        },
        {
          service: 'http://127.0.0.1:9000',
          methods: ['GET'],
          url: '/relay/*',
          url_rewrite: ['/relay', '/api'],
        },
        { service: 'http://127.0.0.1:9000/path', methods: ['GET'], url: '/bad-relay' },
        { service: 'hello.world', methods: ['GET'], url: '/no-default', authentication: ['x-app: v1.auth'] },
      ],
    });
    assert.deepEqual(endpoints[0]!.authentication, {
      kind: 'rules',
      rules: [{ header: 'x-app', value: 'demo', route: 'v1.auth' }],
      fallback: 'hello.world',
    });
    assert.equal(endpoints[1]!.relay?.origin.host, '127.0.0.1:9000');
    assert.deepEqual(endpoints[1]!.relay?.rewrite, ['/relay', '/api']);
    assert.equal(endpoints.length, 2);
    assert.match(report.errors.join('\n'), /Must not contain path/);
    assert.match(report.errors.join('\n'), /missing 'default: route'/);
  });

  it('skips an invalid cors set and any endpoint that names it', () => {
    const { endpoints, report } = compile({
      cors: [{ id: 'bad', options: ['Allow-Origin: *'], headers: [] }],
      rest: [{ service: 'hello.world', methods: ['GET'], url: '/x', cors: 'bad' }],
    });
    assert.equal(endpoints.length, 0);
    assert.match(report.errors[0]!, /Skip invalid cors definition 'bad'/);
  });

  it('keeps a cors set pairing * with credentials as written, with a warning', () => {
    const { endpoints, report } = compile({
      cors: [
        {
          id: 'creds',
          options: ['Access-Control-Allow-Origin: *'],
          headers: ['Access-Control-Allow-Origin: *', 'Access-Control-Allow-Credentials: true'],
        },
        {
          id: 'fine',
          options: ['Access-Control-Allow-Origin: *'],
          headers: ['Access-Control-Allow-Origin: *'],
        },
      ],
      rest: [
        { service: 'hello.world', methods: ['GET'], url: '/x', cors: 'creds' },
        { service: 'hello.world', methods: ['GET'], url: '/y', cors: 'fine' },
      ],
    });
    assert.equal(endpoints.length, 2);
    assert.equal(report.warnings.length, 1, report.warnings.join('\n'));
    assert.match(
      report.warnings[0]!,
      /cors 'creds' .* pairs Access-Control-Allow-Origin \* with Access-Control-Allow-Credentials true/,
    );
  });
});
