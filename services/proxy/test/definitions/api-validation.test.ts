import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  describeValidationErrors,
  validateApi,
  validateApiList,
} from '../../src/definitions/api-validation.ts';
import { loadConfig } from '@gatehouse/service-kit';
import { proxyConfig } from '../../src/config.ts';
import { useEnvScope } from '../../src/definitions/use-env-scope.ts';

const endpoint = { id: 'e1', method: 'GET', path_regex: '/things/(.+)' };
const api = (overrides: Record<string, unknown> = {}) => ({
  id: 'svc',
  name: 'svc',
  version_data: { default: { endpoints: [endpoint] } },
  proxy: { target_url: 'backend.local', port: 8080 },
  ...overrides,
});
const errorsOf = (raw: unknown, env: NodeJS.ProcessEnv = {}) => {
  const result = validateApi(raw, { env });
  assert.equal(result.ok, false, 'expected validation errors');
  return (result as { errors: Record<string, Array<Record<string, string>>> }).errors;
};

describe('API definition validation', () => {
  it('fills in every default of a minimal definition and uppercases the method', () => {
    const result = validateApi(
      api({ version_data: { default: { endpoints: [{ ...endpoint, method: 'get' }] } } }),
    );
    assert.ok(result.ok);
    assert.deepEqual(result.api.auth, {
      use_header: false,
      header_name: '',
      use_query: false,
      query_name: '',
    });
    assert.equal(result.api.auth_type, 'none');
    assert.deepEqual(result.api.version_data.default.endpoints[0], {
      id: 'e1',
      method: 'GET',
      path_regex: '/things/(.+)',
      secured: false,
      transform_request_headers: false,
      target: 'http',
      response_from: 'http',
      publish_credentials: false,
    });
  });

  it('accepts publish_credentials on event targets only, as a boolean', () => {
    const on = (more: Record<string, unknown>) =>
      api({ version_data: { default: { endpoints: [{ ...endpoint, ...more }] } } });
    const ok = validateApi(on({ target: 'kafka', topic: 't', publish_credentials: true }));
    assert.ok(ok.ok);
    assert.equal(ok.api.version_data.default.endpoints[0]!.publish_credentials, true);
    assert.deepEqual(errorsOf(on({ target: 'nats', topic: 't', publish_credentials: 'yes' }))['svc/e1'], [
      { publish_credentials: 'must be boolean' },
    ]);
    assert.match(
      errorsOf(on({ publish_credentials: true }))['svc/e1']![0]!['publish_credentials']!,
      /applies to kafka, kinesis and nats targets only/,
    );
  });

  it('collects every top-level problem at once, in RIG error-map shape', () => {
    assert.deepEqual(errorsOf({ id: 'x', name: 1 }), {
      api: [
        { name: 'must be string' },
        { name: 'must have a length of at least 1' },
        { version_data: 'must be present' },
      ],
    });
    assert.deepEqual(errorsOf(api({ proxy: { target_url: 7 } })).api, [
      { target_url: 'must be string' },
      { target_url: 'must have a length of at least 1' },
      { port: 'must be integer' },
    ]);
    assert.deepEqual(errorsOf(api({ version_data: {} })).api, [
      { version_data: 'must have at least one version, e.g. default' },
    ]);
    assert.deepEqual(errorsOf(api({ version_data: { default: { endpoints: {} } } })).api, [
      { endpoints: 'must be list' },
    ]);
  });

  it('asks for proxy only when an endpoint forwards over HTTP', () => {
    assert.deepEqual(errorsOf(api({ proxy: undefined })).api, [{ proxy: 'must be present' }]);
    const kafkaOnly = api({
      proxy: undefined,
      version_data: {
        default: { endpoints: [{ id: 'k', method: 'POST', path_regex: '/k', target: 'kafka', topic: 't' }] },
      },
    });
    assert.ok(validateApi(kafkaOnly).ok);
  });

  it('names every endpoint problem under <api>/<endpoint>', () => {
    const errors = errorsOf(api({ version_data: { default: { endpoints: [{}] } } }));
    assert.deepEqual(errors['svc/'], [
      { id: 'must be string' },
      { id: 'must have a length of at least 1' },
      { path_regex: 'must be string' },
      { path_regex: 'must have a length of at least 1' },
      { method: 'must be string' },
      { method: 'must have a length of at least 1' },
    ]);
  });

  it('validates methods, regex syntax, targets, topics and response_from combinations', () => {
    const bad = [
      { id: 'm', method: 'FETCH', path_regex: '/a' },
      { id: 'r', method: 'GET', path_regex: '/a/(' },
      { id: 't', method: 'POST', path_regex: '/t', target: 'kafka' },
      { id: 'n', method: 'POST', path_regex: '/n', response_from: 'nats' },
      { id: 'x', method: 'POST', path_regex: '/x', target: 'carrier-pigeon', topic: 't' },
      { id: 'o', method: 'GET', path_regex: '/o', response_timeout: 0 },
    ];
    const errors = errorsOf(api({ version_data: { default: { endpoints: bad } } }));
    assert.match(errors['svc/m']![0]!.method!, /must be one of/);
    assert.match(errors['svc/r']![0]!.path_regex!, /^is not a valid regular expression/);
    assert.deepEqual(errors['svc/t'], [{ topic: 'must be present' }]);
    assert.match(errors['svc/n']![0]!.response_from!, /for target http/);
    assert.match(errors['svc/x']![0]!.target!, /must be one of/);
    assert.match(errors['svc/o']![0]!.response_timeout!, /integer of milliseconds/);
  });

  it('refuses the removed path field with a migration hint built from its value', () => {
    const errors = errorsOf(
      api({ version_data: { default: { endpoints: [{ ...endpoint, path: '/foo/{id}' }] } } }),
    );
    assert.deepEqual(errors['svc/e1'], [
      { path: 'was removed; use path_regex instead, e.g. "path_regex": "/foo/(.+)"' },
    ]);
  });

  it('takes schema (an Avro subject) on kafka and kinesis targets only, and schema needs a target', () => {
    const withSchema = (extra: Record<string, unknown>) =>
      api({ version_data: { default: { endpoints: [{ ...endpoint, schema: 'orders-value', ...extra }] } } });
    assert.deepEqual(errorsOf(withSchema({}))['svc/e1'], [{ target: 'must be present' }]);
    for (const target of ['nats', 'http']) {
      assert.deepEqual(errorsOf(withSchema({ target, topic: 't' }))['svc/e1'], [
        { schema: 'applies to kafka and kinesis targets only' },
      ]);
    }
    assert.deepEqual(errorsOf(withSchema({ target: 'kafka', topic: 't', schema: '' }))['svc/e1'], [
      { schema: 'must have a length of at least 1' },
    ]);
    for (const target of ['kafka', 'kinesis']) {
      const result = validateApi(withSchema({ target, topic: 't' }));
      assert.ok(result.ok, target);
      assert.equal(result.api.version_data.default.endpoints[0]!.schema, 'orders-value');
    }
  });

  it('applies the auth rules: secured needs jwt, use_* need names and jwt', () => {
    const secured = errorsOf(
      api({ version_data: { default: { endpoints: [{ ...endpoint, secured: true }] } } }),
    );
    assert.deepEqual(secured['svc/e1'], [{ auth_type: 'must be one of ["jwt"]' }]);
    const auth = errorsOf(api({ auth: { use_header: true, use_query: true } }));
    assert.deepEqual(auth['svc'], [
      { header_name: 'must be present' },
      { query_name: 'must be present' },
      { auth_type: 'must be one of ["jwt"]' },
    ]);
  });

  it('defaults a jwt API to the Authorization header but keeps configured sources', () => {
    const jwt = validateApi(api({ auth_type: 'jwt' }));
    assert.ok(jwt.ok);
    assert.equal(jwt.api.auth.use_header, true);
    assert.equal(jwt.api.auth.header_name, 'Authorization');
    const query = validateApi(api({ auth_type: 'jwt', auth: { use_query: true, query_name: 'token' } }));
    assert.ok(query.ok);
    assert.equal(query.api.auth.use_header, false);
    const custom = validateApi(api({ auth_type: 'jwt', auth: { use_header: true, header_name: 'x-token' } }));
    assert.ok(custom.ok);
    assert.equal(custom.api.auth.header_name, 'x-token');
  });

  it('refuses unknown fields (a typo must not leave an endpoint open) but accepts listing metadata', () => {
    const errors = errorsOf(
      api({ version_data: { default: { endpoints: [{ ...endpoint, secure: true }] } } }),
    );
    assert.deepEqual(errors['svc/e1'], [{ secure: 'is not a known field' }]);
    assert.ok(
      validateApi(api({ active: true, ref_number: 3, timestamp: 'x', node_name: 'n', phx_ref: 'p' })).ok,
    );
  });

  it('checks use_env variables on this replica', () => {
    const withEnv = api({ proxy: { target_url: 'API_HOST', port: 80, use_env: true } });
    assert.match(
      errorsOf(withEnv).api![0]!.target_url!,
      /API_HOST, which is not set or not in PROXY_USE_ENV_ALLOWED/,
    );
    assert.ok(validateApi(withEnv, { env: { API_HOST: 'http://svc.internal' } }).ok);
  });

  it('lets use_env read only allowed variables, and answers alike for set and unset names', () => {
    const processEnv = { API_HOST: 'svc.internal', TOKEN_SECRET: 'a-secret-value-x', HOME: '/root' };
    const scope = useEnvScope(processEnv, ['API_*']);
    assert.deepEqual(scope, { API_HOST: 'svc.internal' });
    assert.ok(
      validateApi(api({ proxy: { target_url: 'API_HOST', port: 80, use_env: true } }), { env: scope }).ok,
    );
    const answer = (name: string) =>
      validateApi(api({ proxy: { target_url: name, port: 80, use_env: true } }), { env: scope });
    const text = (name: string) => JSON.stringify(answer(name)).replaceAll(name, '<name>');
    // TOKEN_SECRET and HOME are set, NOT_THERE is not: the same answer for each.
    assert.equal(text('TOKEN_SECRET'), text('NOT_THERE'));
    assert.equal(text('HOME'), text('NOT_THERE'));
    assert.equal(text('API_UNSET'), text('NOT_THERE'));
    assert.ok(!answer('HOME').ok);
    // Nothing is readable when no scope is given.
    assert.ok(!validateApi(api({ proxy: { target_url: 'HOME', port: 80, use_env: true } })).ok);
    assert.deepEqual(useEnvScope(processEnv, []), {});
    assert.deepEqual(useEnvScope(processEnv, ['HOME']), { HOME: '/root' });
  });

  it('reads PROXY_USE_ENV_ALLOWED as names and prefixes, empty by default', () => {
    assert.deepEqual(loadConfig(proxyConfig, {}).PROXY_USE_ENV_ALLOWED, []);
    assert.deepEqual(
      loadConfig(proxyConfig, { PROXY_USE_ENV_ALLOWED: 'API_HOST, BACKEND_*' }).PROXY_USE_ENV_ALLOWED,
      ['API_HOST', 'BACKEND_*'],
    );
    assert.throws(() => loadConfig(proxyConfig, { PROXY_USE_ENV_ALLOWED: '*' }), /not variable names: \*/);
    assert.throws(
      () => loadConfig(proxyConfig, { PROXY_USE_ENV_ALLOWED: 'A*B' }),
      /not variable names: A\*B/,
    );
  });

  it('validates a list: every API, unique ids, all problems in one map', () => {
    const result = validateApiList([api(), api(), { id: 'bad' }]);
    assert.ok(!result.ok);
    const lines = describeValidationErrors(result.errors);
    assert.ok(lines.includes('svc: id must be unique'));
    assert.ok(lines.includes('api: name must be string'));
    assert.ok(lines.includes('api: version_data must be present'));
    assert.deepEqual(validateApiList({}), {
      ok: false,
      errors: { api: [{ apis: 'must be a list of API definitions' }] },
    });
  });
});
