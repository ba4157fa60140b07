/** HTTP tests of the engine with configurations made for the test in a temp folder. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createLogger, createRegistry, Health } from '@gatehouse/service-kit';
import { createRestEngine } from '../src/index.ts';
import { configFolder, messages, startEngine } from './engine-fixture.ts';

const exampleFunctions = fileURLToPath(new URL('../../../examples/rest-app/functions', import.meta.url));
const ERROR = 50;
const WARN = 40;

describe('configuration', () => {
  it('merges several rest.yaml files from file: and classpath: locations', async () => {
    const dir = configFolder({
      'application.yml': 'rest.automation: true\n',
      'one.yaml':
        'rest:\n  - { service: hello.world, methods: [GET], url: /one }\ncors:\n  - { id: c, options: ["Access-Control-Allow-Origin: a"], headers: ["Access-Control-Allow-Origin: a"] }\n',
      'more/two.yaml':
        'rest:\n  - { service: hello.world, methods: [GET], url: /two, cors: c }\ncors:\n  - { id: c, options: ["Access-Control-Allow-Origin: b"], headers: ["Access-Control-Allow-Origin: b"] }\n',
    });
    const run = await startEngine({
      REST_CONFIG_FOLDER: dir,
      FUNCTIONS_PATH: exampleFunctions,
      YAML_REST_AUTOMATION: `classpath:/one.yaml, file:${dir}/more/two.yaml`,
    });
    try {
      assert.equal((await fetch(`${run.base}/one`)).status, 200);
      const two = await fetch(`${run.base}/two`);
      assert.equal(two.headers.get('access-control-allow-origin'), 'b', 'the later cors set wins');
      assert.ok(
        messages(run.logs, WARN).some((m) =>
          /Duplicated 'cors' in .*two\.yaml will override a prior one 'c'/.test(m),
        ),
      );
    } finally {
      await run.stop();
    }
  });

  it('renders no endpoint of rest.yaml when one is duplicated, keeping the actuators', async () => {
    const dir = configFolder({
      'application.yml':
        'rest.automation: true\nyaml.rest.automation: "classpath:/a.yaml, classpath:/b.yaml"\n',
      'a.yaml':
        'rest:\n  - { service: hello.world, methods: [GET, PUT], url: /api/hello/world }\n  - { service: hello.world, methods: [GET], url: /other }\n',
      'b.yaml': 'rest:\n  - { service: hello.echo, methods: [PUT], url: /api/hello/world }\n',
    });
    const run = await startEngine({ REST_CONFIG_FOLDER: dir, FUNCTIONS_PATH: exampleFunctions });
    try {
      assert.equal((await fetch(`${run.base}/other`)).status, 404);
      assert.equal((await fetch(`${run.base}/health`)).status, 200);
      const errors = messages(run.logs, ERROR);
      assert.ok(
        errors.some((m) =>
          /REST endpoint rendering aborted due to duplicated entry 'PUT \/api\/hello\/world' in .*b\.yaml/.test(
            m,
          ),
        ),
        errors.join('\n'),
      );
    } finally {
      await run.stop();
    }
  });

  it('skips an invalid entry with an error and serves the rest; a user /health replaces the actuator', async () => {
    const dir = configFolder({
      'application.properties': 'rest.automation=true\n',
      'rest.yaml':
        'rest:\n  - { service: hello.world, methods: [GET], url: /ok }\n  - { service: hello.world, methods: [GET], url: /bad, cors: nope }\n  - { service: hello.echo, methods: [GET], url: /health }\n',
    });
    const run = await startEngine({ REST_CONFIG_FOLDER: dir, FUNCTIONS_PATH: exampleFunctions });
    try {
      assert.equal((await fetch(`${run.base}/ok`)).status, 200);
      assert.equal((await fetch(`${run.base}/bad`)).status, 404);
      const health = (await (await fetch(`${run.base}/health`)).json()) as Record<string, unknown>;
      assert.equal(health['url'], '/health', 'served by the user function');
      assert.equal((await fetch(`${run.base}/livenessprobe`)).status, 200);
      assert.ok(
        messages(run.logs, ERROR).some((m) =>
          /Skip invalid REST entry rest\[1\] \(GET \/bad\).*cors ID nope is not found/.test(m),
        ),
      );
    } finally {
      await run.stop();
    }
  });

  it('loads .ts functions from a folder outside the repository and keeps to their instances', async () => {
    const dir = configFolder({
      'application.yml': 'rest.automation: true\n',
      'rest.yaml': 'rest:\n  - { service: outside.serial, methods: [GET], url: /serial }\n',
      'functions/serial.ts': [
        "import { defineFunction, EventEnvelope } from '@gatehouse/functions';",
        'let running = 0;',
        'let most = 0;',
        'export default defineFunction({',
        "  route: 'outside.serial',",
        '  instances: 1,',
        '  handleEvent: async (_h: unknown, _r: unknown, instance: number) => {',
        '    running++;',
        '    most = Math.max(most, running);',
        '    await new Promise((r) => setTimeout(r, 50));',
        '    running--;',
        "    return new EventEnvelope().setHeader('x-instance', instance).setBody({ most });",
        '  },',
        '});',
        '',
      ].join('\n'),
      'functions/not-a-function.ts': 'export const x = 1;\n',
    });
    const run = await startEngine({ REST_CONFIG_FOLDER: dir });
    try {
      const started = performance.now();
      const answers = await Promise.all([1, 2, 3].map(() => fetch(`${run.base}/serial`)));
      const bodies = (await Promise.all(answers.map((a) => a.json()))) as Array<{ most: number }>;
      assert.ok(performance.now() - started >= 140, 'one at a time');
      assert.deepEqual(
        bodies.map((b) => b.most),
        [1, 1, 1],
      );
      assert.ok(answers.every((a) => a.headers.get('x-instance') === '1'));
      assert.ok(
        messages(run.logs, WARN).some((m) =>
          /not-a-function\.ts has no default export made with defineFunction/.test(m),
        ),
      );
    } finally {
      await run.stop();
    }
  });

  it('starts no server when rest.automation is off, and reports not ready while switched on and stopped', async () => {
    const dir = configFolder({ 'application.yml': 'rest.automation: false\n' });
    const logger = createLogger({ name: 'test', level: 'silent' });
    const off = createRestEngine({ logger, registry: createRegistry(), env: { REST_CONFIG_FOLDER: dir } });
    await off.start!();
    assert.equal(off.port, undefined);
    await off.stop!();

    const health = new Health();
    const on = createRestEngine({
      logger,
      registry: createRegistry(),
      health,
      env: { REST_AUTOMATION: 'true', REST_SERVER_PORT: '0', REST_SERVER_HOST: '127.0.0.1' },
    });
    assert.equal((await health.readiness()).ready, false);
    await on.start!();
    assert.equal((await health.readiness()).ready, true);
    assert.ok(!on.endpoints.some((e) => e.primary === 'hello.world'), 'never the example app by default');
    await on.stop!();
  });

  it('serves no endpoints of its own, only the built-in ones, without REST_CONFIG_FOLDER', async () => {
    const logs: Array<Record<string, unknown>> = [];
    const logger = createLogger({
      name: 'test',
      level: 'info',
      destination: { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
    });
    const engine = createRestEngine({
      logger,
      registry: createRegistry(),
      env: { REST_SERVER_PORT: '0', REST_SERVER_HOST: '127.0.0.1' },
    });
    await engine.start();
    try {
      const base = `http://127.0.0.1:${engine.port}`;
      assert.equal((await fetch(`${base}/api/hello/world`)).status, 404, 'no example app');
      assert.equal((await fetch(`${base}/api/echo/1`)).status, 404);
      assert.equal((await fetch(`${base}/health`)).status, 200, 'the built-in endpoints answer');
      assert.ok(
        logs.some((l) => l['level'] === WARN && String(l['msg']).includes('REST_CONFIG_FOLDER is not set')),
        'the start-up log says how to give it an application',
      );
    } finally {
      await engine.stop();
    }
  });

  it('drains an open request on stop', async () => {
    const run = await startEngine({ LOG_LEVEL: 'silent' });
    const pending = fetch(`${run.base}/api/slow?ms=200`);
    await new Promise((r) => setTimeout(r, 50));
    await run.stop();
    const res = await pending;
    assert.equal(res.status, 200);
    await assert.rejects(fetch(`${run.base}/api/hello/world`));
  });
});
