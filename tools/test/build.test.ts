/**
 * The production build (tools/build.ts) as the image runs it: a built service starts from
 * `node --enable-source-maps services/<name>/dist/main.js`, answers /ready, loads no TypeScript
 * source, and loads the client library of a broker only when its settings name that broker.
 * Which modules a process loaded is read from the process itself: a preloaded hook logs every
 * module it loads (testkit's loadedModulesRecorder).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { before, describe, it } from 'node:test';
import { freePort, gatewayEnv, loadedModulesRecorder, spawnService } from '@gatehouse/testkit';
import { buildAll } from '../build.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const brokerLibraries = ['/kafkajs/', '/@nats-io/', '/@aws-sdk/client-kinesis/'];

/** Starts a built service with these settings; resolves with the URLs of the modules it loaded. */
async function loadedByBuilt(
  /** `push-hub` (services/push-hub) or `embedded`. */
  service: string,
  name: string,
  settings: Record<string, string>,
): Promise<string[]> {
  const log = join(tmpdir(), `gatehouse-loaded-${process.pid}-${name}.txt`);
  await rm(log, { force: true });
  const hub = await spawnService({
    entry: `${service === 'embedded' ? '' : 'services/'}${service}/dist/main.js`,
    nodeArgs: ['--enable-source-maps', '--import', loadedModulesRecorder],
    publicPort: true,
    env: {
      ...gatewayEnv({ run: `build-test-${process.pid}-${name}`, jwtSecret: 'build-test-secret-0123456789' }),
      ...settings,
      LOADED_MODULES_FILE: log,
    },
    readyTimeoutMs: 60_000,
  });
  try {
    const ready = await fetch(`${hub.apiUrl}/ready`);
    if (service === 'embedded') await fetch(`${hub.publicUrl}/api/hello/world`); // the example app answers
    assert.equal(ready.status, 200, hub.output());
    return (await readFile(log, 'utf8')).split('\n').filter(Boolean);
  } finally {
    await hub.stop();
    await rm(log, { force: true });
  }
}

const libraryLoads = (urls: string[]) =>
  brokerLibraries.filter((library) => urls.some((url) => url.includes(`/node_modules/${library.slice(1)}`)));

describe('production build', () => {
  before(async () => {
    await buildAll();
  });

  it('starts a built push hub that answers /ready and loads only built JavaScript of its own', async () => {
    const loaded = await loadedByBuilt('push-hub', 'redis', { FANOUT_BUS: 'redis', CONTROL_BUS: 'redis' });
    const own = loaded.filter((url) => url.startsWith('file:') && !url.includes('/node_modules/'));
    // The recorder itself is the one TypeScript file: it is preloaded by the test, not the service.
    const typescript = own.filter((url) => url.endsWith('.ts') && !url.includes('loaded-modules-recorder'));
    assert.deepEqual(typescript, []);
    assert.ok(own.some((url) => url.endsWith('/services/push-hub/dist/main.js')));
  });

  it('starts the built embedded runner with the built example REST app and loads no TypeScript file', async () => {
    const loaded = await loadedByBuilt('embedded', 'embedded', {
      REST_SERVER_PORT: String(await freePort()),
      // What the image carries for anyone who asks for it (the image's default is no app).
      REST_CONFIG_FOLDER: join(root, 'examples/rest-app/dist'),
    });
    const typescript = loaded.filter(
      (url) => url.startsWith('file:') && url.endsWith('.ts') && !url.includes('loaded-modules-recorder'),
    );
    assert.deepEqual(typescript, []);
    assert.ok(loaded.some((url) => url.endsWith('/examples/rest-app/dist/functions/hello-world.js')));
  });

  it('never loads the client of a broker the settings do not name', async () => {
    const loaded = await loadedByBuilt('push-hub', 'redis-only', {
      FANOUT_BUS: 'redis',
      CONTROL_BUS: 'redis',
    });
    assert.deepEqual(libraryLoads(loaded), []);
    assert.ok(
      loaded.some((url) => url.includes('/node_modules/ioredis/')),
      'the Redis client is loaded',
    );
  });

  it('never loads the Redis client when neither the store nor a bus is Redis', async () => {
    const loaded = await loadedByBuilt('push-hub', 'memory', {
      FANOUT_BUS: 'memory',
      CONTROL_BUS: 'memory',
      STORE: 'memory',
    });
    assert.deepEqual(
      loaded.filter((url) => url.includes('/node_modules/ioredis/')),
      [],
    );
    assert.ok(loaded.some((url) => url.endsWith('/packages/store/dist/memory-store.js')));
  });

  it('never loads the schema validator (ajv) in a service that validates no internal API body', async () => {
    const loaded = await loadedByBuilt('push-hub', 'no-ajv', { FANOUT_BUS: 'redis', CONTROL_BUS: 'redis' });
    assert.deepEqual(
      loaded.filter((url) => url.includes('/node_modules/ajv/')),
      [],
    );
  });

  it('never loads jose when no JWKS URL is configured', async () => {
    const loaded = await loadedByBuilt('push-hub', 'no-jose', { FANOUT_BUS: 'redis', CONTROL_BUS: 'redis' });
    assert.deepEqual(
      loaded.filter((url) => url.includes('/node_modules/jose/')),
      [],
    );
  });

  it('loads kafkajs once the fan-out bus is Kafka', async () => {
    const loaded = await loadedByBuilt('push-hub', 'kafka', { FANOUT_BUS: 'kafka', CONTROL_BUS: 'redis' });
    assert.deepEqual(libraryLoads(loaded), ['/kafkajs/']);
  });

  it('never loads the schema registry library when no registry is configured', async () => {
    const loaded = await loadedByBuilt('publisher', 'publisher', { FANOUT_BUS: 'redis' });
    const registry = loaded.filter((url) =>
      url.includes('/node_modules/@kafkajs/confluent-schema-registry/'),
    );
    assert.deepEqual(registry, []);
  });

  it('gives back the young generation start-up grew, in a push hub started as the image starts it', async () => {
    const hub = await spawnService({
      entry: 'services/push-hub/dist/main.js',
      nodeArgs: ['--enable-source-maps', '--max-semi-space-size=8'],
      env: gatewayEnv({ run: `build-test-${process.pid}-young`, jwtSecret: 'build-test-secret-0123456789' }),
      readyTimeoutMs: 60_000,
    });
    try {
      // What /metrics reports of V8's young generation (space "new"): 16 MiB with semi-spaces of 8
      // MiB grown by start-up, 1–2 MiB once given back.
      let young = Number.POSITIVE_INFINITY;
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && young > 2 * 1024 * 1024) {
        const metrics = await (await fetch(`${hub.apiUrl}/metrics`)).text();
        young = Number(
          /^gw_nodejs_heap_space_size_total_bytes\{space="new"[^}]*\} (\d+)/m.exec(metrics)?.[1],
        );
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      assert.ok(young <= 2 * 1024 * 1024, `young generation still ${young} bytes\n${hub.output()}`);
    } finally {
      await hub.stop();
    }
  });

  it('maps a stack trace of the built JavaScript to the TypeScript line (--enable-source-maps)', async () => {
    const builtKit = fileURLToPath(new URL('../../packages/service-kit/dist/index.js', import.meta.url));
    const script = `const kit = await import(${JSON.stringify(builtKit)});
      try { kit.loadConfig({ X: kit.port('x', 1) }, { X: 'not a port' }); } catch (e) { console.log(e.stack); }`;
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--enable-source-maps',
      '--input-type=module',
      '-e',
      script,
    ]);
    assert.match(stdout, /packages\/service-kit\/src\/env-config\.ts:\d+:\d+/);
  });
});
