import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { corsConfig } from '../src/cors-config.ts';
import { CorsPolicy, type PreflightRules, pairsWildcardWithCredentials } from '../src/cors.ts';
import { ConfigError, loadConfig } from '../src/env-config.ts';

const rules: PreflightRules = { methods: 'GET, PUT', headers: 'content-type, authorization' };
const withOrigin = (origin?: string) =>
  ({ headers: origin === undefined ? {} : { origin } }) as unknown as IncomingMessage;

describe('CorsPolicy without an allow-list', () => {
  const policy = new CorsPolicy([]);

  it('answers * and never credentials, whatever the origin', () => {
    for (const origin of [undefined, 'https://evil.example', 'null']) {
      assert.deepEqual(policy.headers(withOrigin(origin)), { 'access-control-allow-origin': '*' });
    }
    assert.equal(policy.credentials, false);
  });

  it('lets every WebSocket upgrade through', () => {
    assert.equal(policy.permitsUpgrade('https://evil.example'), true);
  });

  it('gives socket.io * without credentials', () => {
    const o = policy.socketIoOptions(rules);
    assert.equal(o.origin, '*');
    assert.equal(o.credentials, false);
  });
});

describe('CorsPolicy with an allow-list', () => {
  const policy = new CorsPolicy([
    'https://app.example',
    'HTTP://Localhost:8080/',
    'https://*.apps.example:8443',
  ]);

  it('echoes a listed origin with credentials and Vary: Origin', () => {
    assert.deepEqual(policy.headers(withOrigin('https://app.example')), {
      'access-control-allow-origin': 'https://app.example',
      'access-control-allow-credentials': 'true',
      vary: 'Origin',
    });
    assert.equal(
      policy.allowOrigin('http://localhost:8080'),
      'http://localhost:8080',
      'entries are normalized',
    );
  });

  it('sends no allow-origin, and never *, for an origin off the list or none', () => {
    for (const origin of [
      'https://evil.example',
      'https://app.example.evil.example',
      'http://app.example',
      'null',
    ]) {
      assert.deepEqual(policy.headers(withOrigin(origin)), { vary: 'Origin' }, origin);
    }
    assert.deepEqual(policy.headers(withOrigin()), { vary: 'Origin' });
  });

  it('matches a pattern only on subdomains with the same scheme and port', () => {
    assert.equal(policy.allowOrigin('https://a.apps.example:8443'), 'https://a.apps.example:8443');
    assert.equal(policy.allowOrigin('https://a.b.apps.example:8443'), 'https://a.b.apps.example:8443');
    for (const origin of [
      'https://apps.example:8443',
      'https://a.apps.example',
      'http://a.apps.example:8443',
      'https://a.apps.example.evil:8443',
      'https://evilapps.example:8443',
      'https://a_b.apps.example:8443',
    ]) {
      assert.equal(policy.allowOrigin(origin), undefined, origin);
    }
  });

  it('refuses browser upgrades from other origins and lets clients without Origin through', () => {
    assert.equal(policy.permitsUpgrade('https://app.example'), true);
    assert.equal(policy.permitsUpgrade(undefined), true);
    assert.equal(policy.permitsUpgrade('https://evil.example'), false);
  });

  it('gives socket.io an origin function with credentials', () => {
    const o = policy.socketIoOptions(rules);
    assert.equal(o.credentials, true);
    assert.equal(typeof o.origin, 'function');
    const decide = o.origin as Exclude<typeof o.origin, string>;
    const answers: Array<string | false | undefined> = [];
    decide('https://app.example', (_, allow) => answers.push(allow));
    decide('https://evil.example', (_, allow) => answers.push(allow));
    assert.deepEqual(answers, ['https://app.example', false]);
  });
});

describe('CorsPolicy entries', () => {
  for (const [entry, problem] of [
    ['*', /wildcard/],
    ['https://*', /wildcard/],
    ['https://*.com', /two labels/],
    ['https://a.*.example', /wildcard/],
    ['null', /sandboxed/],
    ['https://app.example/path', /not an origin/],
    ['app.example', /not an origin/],
    ['https://app.example:99999', /out of range/],
  ] as const) {
    it(`refuses ${entry}`, () => assert.throws(() => new CorsPolicy([entry]), problem));
  }

  it('drops default ports as browsers do', () => {
    const policy = new CorsPolicy(['https://app.example:443', 'http://*.dev.example:80']);
    assert.equal(policy.allowOrigin('https://app.example'), 'https://app.example');
    assert.equal(policy.allowOrigin('http://x.dev.example'), 'http://x.dev.example');
  });
});

describe('pairsWildcardWithCredentials', () => {
  it('finds * with credentials in literal headers, whatever the case', () => {
    assert.equal(
      pairsWildcardWithCredentials([
        ['Access-Control-Allow-Origin', ' * '],
        ['access-control-allow-credentials', 'TRUE'],
      ]),
      true,
    );
    assert.equal(pairsWildcardWithCredentials([['access-control-allow-origin', '*']]), false);
    assert.equal(
      pairsWildcardWithCredentials([
        ['access-control-allow-origin', 'https://app.example'],
        ['access-control-allow-credentials', 'true'],
      ]),
      false,
    );
  });
});

describe('corsConfig', () => {
  it('reads CORS_ALLOWED_ORIGINS as a comma-separated list', () => {
    const config = loadConfig(corsConfig, {
      CORS_ALLOWED_ORIGINS: ' https://a.example , ,https://b.example',
    });
    assert.equal(config.CORS_ALLOWED_ORIGINS.allowOrigin('https://b.example'), 'https://b.example');
    assert.equal(loadConfig(corsConfig, {}).CORS_ALLOWED_ORIGINS.credentials, false);
  });

  it('stops start-up on an invalid origin or the retired CORS setting, naming the variable', () => {
    assert.throws(
      () => loadConfig(corsConfig, { CORS_ALLOWED_ORIGINS: 'https://a.example,*' }),
      (err) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, /CORS_ALLOWED_ORIGINS: .*wildcard/);
        return true;
      },
    );
    assert.throws(
      () => loadConfig(corsConfig, { CORS: 'https://a.example' }),
      /CORS: is replaced by CORS_ALLOWED_ORIGINS/,
    );
    assert.doesNotThrow(() => loadConfig(corsConfig, { CORS: '*' }));
  });
});

describe('CorsPolicy preflight over HTTP', () => {
  let server: Server;
  let url: string;
  const policy = new CorsPolicy(['https://app.example']);

  before(async () => {
    server = createServer((req, res) => policy.preflight(req, res, rules)).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => server.close());

  it('answers 204 with methods, headers, max-age and the echoed origin', async () => {
    const res = await fetch(url, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'PUT' },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example');
    assert.equal(res.headers.get('access-control-allow-credentials'), 'true');
    assert.equal(res.headers.get('access-control-allow-methods'), 'GET, PUT');
    assert.equal(res.headers.get('access-control-allow-headers'), 'content-type, authorization');
    assert.equal(res.headers.get('access-control-max-age'), '600');
    assert.equal(res.headers.get('vary'), 'Origin');
  });

  it('leaves out allow-origin and credentials for an origin off the list', async () => {
    const res = await fetch(url, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    assert.equal(res.headers.get('access-control-allow-credentials'), null);
  });
});
