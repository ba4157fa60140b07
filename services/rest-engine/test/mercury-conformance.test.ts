/**
 * Issue 14 items 7-11 over HTTP, against an engine with functions made for the test: unregistered
 * routes, HEAD lengths, the header set on errors, XML lists and error roots, actuators.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { configFolder, freePort, messages, type RunningEngine, startEngine } from './engine-fixture.ts';

const WARN = 40;

const functions = {
  'functions/hundred.ts': `import { defineFunction } from '@gatehouse/functions';
export default defineFunction({ route: 'conf.hundred', handleEvent: () => 'x'.repeat(100) });
`,
  'functions/hundred-bytes.ts': `import { defineFunction } from '@gatehouse/functions';
export default defineFunction({ route: 'conf.hundred.bytes', handleEvent: () => Buffer.alloc(100, 1) });
`,
  'functions/head-length.ts': `import { defineFunction, EventEnvelope } from '@gatehouse/functions';
// Mercury's way to answer HEAD: the length of what GET would send, no body computed.
export default defineFunction({
  route: 'conf.head.length',
  handleEvent: (_h, request) =>
    request.getMethod() === 'HEAD'
      ? new EventEnvelope().setHeader('content-length', '100')
      : 'y'.repeat(100),
});
`,
  'functions/conflict.ts': `import { AppException, defineFunction } from '@gatehouse/functions';
export default defineFunction({ route: 'conf.conflict', handleEvent: () => { throw new AppException(409, 'Already there'); } });
`,
  'functions/list.ts': `import { defineFunction } from '@gatehouse/functions';
export default defineFunction({ route: 'conf.list', handleEvent: () => [{ a: 1 }, { a: 2, b: 'x' }] });
`,
  'functions/health.ts': `import { AppException, defineFunction } from '@gatehouse/functions';
// A health dependency: type=info says what it checks, type=health checks it.
// GET /api/toggle/{name}/{up} switches a dependency on or off.
const state = { 'demo.health': true, 'other.health': true };
export const healthOf = (name) => defineFunction({
  route: name,
  handleEvent: (headers) => {
    if (headers.type === 'info') return { service: name.replace('.health', '.service'), href: 'http://127.0.0.1' };
    if (headers.type === 'health') {
      if (!state[name]) throw new AppException(503, name + ' is down');
      return name + ' is running fine';
    }
    throw new AppException(400, 'type must be info or health');
  },
});
export default defineFunction({
  route: 'conf.toggle',
  handleEvent: (_h, request) => {
    state[request.getPathParameter('name')] = request.getPathParameter('up') === 'true';
    return { ok: true };
  },
});
`,
  'functions/demo-health.ts': `import { healthOf } from './health.ts';
export default healthOf('demo.health');
`,
  'functions/other-health.ts': `import { healthOf } from './health.ts';
export default healthOf('other.health');
`,
};

const restYaml = `
rest:
  - { service: conf.hundred, methods: [GET, HEAD], url: /api/hundred }
  - { service: conf.hundred.bytes, methods: [GET, HEAD], url: /api/hundred-bytes }
  - { service: conf.head.length, methods: [GET, HEAD], url: /api/head-length }
  - { service: conf.conflict, methods: [GET], url: /api/conflict, headers: secure, cors: c1 }
  - { service: conf.hundred, methods: [GET], url: /api/secure, headers: secure }
  - { service: conf.list, methods: [GET], url: /api/list }
  - { service: no.such.function, methods: [GET, POST], url: /api/missing, cors: c1, headers: secure }
  - { service: conf.hundred, methods: [GET, POST], url: /api/missing-auth, authentication: no.such.auth }
  - { service: conf.toggle, methods: [GET], url: "/api/toggle/{name}/{up}" }
  - service: "http://127.0.0.1:\${rest.server.port}"
    methods: [GET, HEAD]
    url: /api/relayed/hundred
    url_rewrite: [/api/relayed, /api]
cors:
  - id: c1
    options: ["Access-Control-Allow-Origin: *"]
    headers: ["Access-Control-Allow-Origin: *"]
headers:
  - id: secure
    response:
      add:
        - "Strict-Transport-Security: max-age=31536000"
        - "Cache-Control: no-cache, no-store"
        - "Pragma: no-cache"
        - "Expires: Thu, 01 Jan 1970 00:00:00 GMT"
`;

let run: RunningEngine;

before(async () => {
  const dir = configFolder({
    'application.yml': 'rest.automation: true\napplication.name: conformance\n',
    'rest.yaml': restYaml,
    ...functions,
  });
  run = await startEngine({
    // A fixed port, because the relay endpoint forwards to the engine itself.
    REST_SERVER_PORT: String(await freePort()),
    REST_CONFIG_FOLDER: dir,
    FUNCTIONS_PATH: `${dir}/functions`,
    MANDATORY_HEALTH_DEPENDENCIES: 'demo.health',
    OPTIONAL_HEALTH_DEPENDENCIES: 'other.health, no.such.health',
  });
});
after(() => run.stop());

function raw(method: string, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
    (resolve, reject) => {
      const req = httpRequest(`${run.base}${path}`, { method, headers }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      });
      req.on('error', reject);
      req.end();
    },
  );
}

const secureHeaders = {
  'strict-transport-security': 'max-age=31536000',
  'cache-control': 'no-cache, no-store',
  pragma: 'no-cache',
  expires: 'Thu, 01 Jan 1970 00:00:00 GMT',
};

function assertSecureHeaders(headers: Headers) {
  for (const [name, value] of Object.entries(secureHeaders)) assert.equal(headers.get(name), value, name);
}

describe('an unregistered function or authentication service (issue 14.7)', () => {
  it('keeps the entry, warns at start and answers 503 Service <route> not reachable', async () => {
    const warnings = messages(run.logs, WARN).join('\n');
    assert.match(warnings, /\/api\/missing\).*service no\.such\.function has no function/);
    assert.match(warnings, /\/api\/missing-auth\).*authentication service no\.such\.auth has no function/);
    const res = await fetch(`${run.base}/api/missing`);
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), {
      message: 'Service no.such.function not reachable',
      type: 'error',
      status: 503,
    });
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    const auth = await fetch(`${run.base}/api/missing-auth`, { method: 'POST', body: '{"a":1}' });
    assert.equal(auth.status, 503);
    assert.equal(((await auth.json()) as { message: string }).message, 'Service no.such.auth not reachable');
  });
});

describe('HEAD (issue 14.8)', () => {
  it('carries the length GET would have, with no body', async () => {
    for (const path of ['/api/hundred', '/api/hundred-bytes', '/api/head-length', '/api/relayed/hundred']) {
      const get = await raw('GET', path);
      assert.equal(get.body.length, 100, `GET ${path}`);
      const head = await raw('HEAD', path);
      assert.equal(head.status, 200);
      assert.equal(head.headers['content-length'], '100', `HEAD ${path}`);
      assert.equal(head.body, '');
    }
  });
});

describe('the endpoint header set on every answer (issue 14.9)', () => {
  it('is on a success, an AppException error and a 503', async () => {
    const ok = await fetch(`${run.base}/api/secure`);
    assert.equal(ok.status, 200);
    assertSecureHeaders(ok.headers);
    const conflict = await fetch(`${run.base}/api/conflict`);
    assert.equal(conflict.status, 409);
    assert.deepEqual(await conflict.json(), { message: 'Already there', type: 'error', status: 409 });
    assertSecureHeaders(conflict.headers);
    assert.equal(conflict.headers.get('access-control-allow-origin'), '*');
    assert.ok(conflict.headers.get('x-correlation-id'));
    const missing = await fetch(`${run.base}/api/missing`);
    assert.equal(missing.status, 503);
    assertSecureHeaders(missing.headers);
  });
});

describe('XML (issue 14.10)', () => {
  it('renders a list inside a <result> root, one <result> per item', async () => {
    const res = await fetch(`${run.base}/api/list`, { headers: { accept: 'application/xml' } });
    assert.equal(res.headers.get('content-type'), 'application/xml');
    assert.equal(
      await res.text(),
      '<?xml version="1.0" encoding="UTF-8"?>\n<result>\n  <result>\n    <a>1</a>\n  </result>\n  <result>\n    <a>2</a>\n    <b>x</b>\n  </result>\n</result>',
    );
  });

  it('renders errors with the <root> element', async () => {
    const res = await fetch(`${run.base}/api/conflict`, { headers: { accept: 'application/xml' } });
    assert.equal(res.status, 409);
    assert.equal(
      await res.text(),
      '<?xml version="1.0" encoding="UTF-8"?>\n<root>\n  <message>Already there</message>\n  <status>409</status>\n  <type>error</type>\n</root>',
    );
  });
});

describe('actuators (issue 14.11)', () => {
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are read by path in assertions
  const json = async (path: string, headers: Record<string, string> = {}): Promise<[number, any]> => {
    const res = await fetch(`${run.base}${path}`, { headers });
    return [res.status, await res.json()];
  };

  it('/info carries Mercury fields with personality REST', async () => {
    const [status, info] = await json('/info');
    assert.equal(status, 200);
    assert.equal(info.personality, 'REST');
    assert.equal(info.app.name, 'conformance');
    assert.deepEqual(Object.keys(info.memory).sort(), ['free', 'max', 'used']);
    assert.match(info.memory.max, /^\d{1,3}(,\d{3})*$/);
    assert.deepEqual(Object.keys(info.time).sort(), ['current', 'start']);
    assert.match(info.uptime, /^(\d+ (day|hour|minute)s? )*\d+ seconds?$/);
    assert.equal(typeof info.origin, 'string');
    const xml = await fetch(`${run.base}/info`, { headers: { accept: 'application/xml' } });
    assert.equal(xml.headers.get('content-type'), 'application/xml');
    assert.match(await xml.text(), /^<\?xml[^>]*>\n<result>[\s\S]*<personality>REST<\/personality>/);
  });

  it('/health lists each dependency; a failing mandatory one is 400 DOWN and /livenessprobe follows', async () => {
    const [up, body] = await json('/health');
    assert.equal(up, 200);
    assert.equal(body.status, 'UP');
    assert.equal(body.name, 'conformance');
    assert.deepEqual(body.dependency, [
      {
        route: 'other.health',
        required: false,
        service: 'other.service',
        href: 'http://127.0.0.1',
        status_code: 200,
        message: 'other.health is running fine',
      },
      {
        route: 'no.such.health',
        required: false,
        status_code: 404,
        message: 'Please check - Route no.such.health not found',
      },
      {
        route: 'demo.health',
        required: true,
        service: 'demo.service',
        href: 'http://127.0.0.1',
        status_code: 200,
        message: 'demo.health is running fine',
      },
    ]);
    const live = await fetch(`${run.base}/livenessprobe`);
    assert.equal(live.status, 200);
    assert.equal(await live.text(), 'OK');

    // An optional dependency down: still UP.
    await fetch(`${run.base}/api/toggle/other.health/false`);
    const [stillUp, partly] = await json('/health');
    assert.equal(stillUp, 200);
    assert.equal(partly.dependency[0].status_code, 503);
    assert.equal(partly.dependency[0].message, 'other.health is down');

    // The mandatory one down: DOWN, and the liveness probe says so until /health is UP again.
    await fetch(`${run.base}/api/toggle/demo.health/false`);
    const [down, downBody] = await json('/health');
    assert.equal(down, 400);
    assert.equal(downBody.status, 'DOWN');
    assert.deepEqual(downBody.dependency[2], {
      route: 'demo.health',
      required: true,
      service: 'demo.service',
      href: 'http://127.0.0.1',
      status_code: 503,
      message: 'demo.health is down',
    });
    const unhealthy = await fetch(`${run.base}/livenessprobe`);
    assert.equal(unhealthy.status, 400);
    assert.equal(unhealthy.headers.get('content-type'), 'text/plain');
    assert.equal(await unhealthy.text(), "Unhealthy. Please check '/health' endpoint.");

    await fetch(`${run.base}/api/toggle/demo.health/true`);
    await fetch(`${run.base}/api/toggle/other.health/true`);
    assert.equal((await json('/health'))[0], 200);
    assert.equal(await (await fetch(`${run.base}/livenessprobe`)).text(), 'OK');
  });

  it('warns at start about a health dependency without a function', () => {
    assert.ok(
      messages(run.logs, WARN).some((m) => /Health dependency no\.such\.health has no function/.test(m)),
    );
  });
});

describe('requests parts read by the well-kept packages (issue 13.3)', () => {
  it('negotiates Accept by RFC 9110 (negotiator): a media range, and the more specific type on a tie', async () => {
    for (const accept of ['text/*', '*/*;q=0.9, text/html;q=0.9']) {
      const res = await fetch(`${run.base}/api/conflict`, { headers: { accept } });
      assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8', accept);
      assert.match(await res.text(), /<h3>HTTP-409<\/h3>/);
    }
    const json = await fetch(`${run.base}/api/conflict`, { headers: { accept: 'image/png' } });
    assert.equal(json.headers.get('content-type'), 'application/json');
  });
});
