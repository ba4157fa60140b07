/**
 * tools/prebuild.sh starts the long Go builds in the background when `make test` begins; a stage
 * waits for the one build it needs, not for both; a failed build is reported (the stage then
 * builds it itself) without failing the wait; `stop` ends what still runs. Fake builds stand in
 * for nats-server's, Jaeger's and Kubernetes': they record when they ran and take as long as they
 * are told.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, afterEach, it } from 'node:test';

const script = fileURLToPath(new URL('../prebuild.sh', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'prebuild-test-'));
let n = 0;
let env: Record<string, string> = {};

/** A fake build: writes `<name>.ran` when it ends, after `seconds`, with `exitCode`. */
function fakeBuild(name: string, seconds: number, exitCode = 0): string {
  const file = join(dir, `${name}-${n}.sh`);
  writeFileSync(
    file,
    `#!/bin/sh\nsleep ${seconds}\ntouch ${join(dir, `${name}-${n}.ran`)}\nexit ${exitCode}\n`,
  );
  chmodSync(file, 0o755);
  return file;
}

function prebuild(...args: string[]) {
  return spawnSync('bash', [script, ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

/** A state folder and fake builds of the test's own: `setUp(() => [jaeger, kubernetes, nats?])`. */
function setUp(builds: () => [string, string, string?]): void {
  n++;
  const [jaeger, kubernetes, nats = fakeBuild('nats', 0)] = builds();
  env = {
    PREBUILD_DIR: join(dir, `state-${n}`),
    PREBUILD_NATS: nats,
    PREBUILD_JAEGER: jaeger,
    PREBUILD_KUBERNETES: kubernetes,
  };
}

afterEach(() => {
  prebuild('stop');
});
after(() => rmSync(dir, { recursive: true, force: true }));

it('waits for the build a stage needs, not for the other one', () => {
  setUp(() => [fakeBuild('jaeger', 0.2), fakeBuild('kubernetes', 20)]);
  assert.equal(prebuild('start', 'jaeger', 'kubernetes').status, 0);
  const started = Date.now();
  const waited = prebuild('wait', 'jaeger');
  assert.equal(waited.status, 0);
  assert.match(waited.stdout, /jaeger built in the background/);
  assert.ok(existsSync(join(dir, `jaeger-${n}.ran`)));
  assert.ok(!existsSync(join(dir, `kubernetes-${n}.ran`)), 'kubernetes is still building');
  assert.ok(Date.now() - started < 15_000);
});

it('builds nats-server first when asked (as make test does), and the brokers stage waits for it', () => {
  setUp(() => [fakeBuild('jaeger', 20), fakeBuild('kubernetes', 20), fakeBuild('nats', 0.2)]);
  assert.equal(prebuild('start', 'nats', 'jaeger', 'kubernetes').status, 0);
  const waited = prebuild('wait', 'nats');
  assert.equal(waited.status, 0);
  assert.match(waited.stdout, /nats built in the background/);
  assert.ok(existsSync(join(dir, `nats-${n}.ran`)));
  assert.ok(!existsSync(join(dir, `jaeger-${n}.ran`)), 'jaeger is still building');
});

it('waits until the build is done, and runs the builds one after the other in the order given', () => {
  setUp(() => [fakeBuild('jaeger', 0.5), fakeBuild('kubernetes', 0.5)]);
  prebuild('start', 'jaeger', 'kubernetes');
  assert.equal(prebuild('wait', 'kubernetes').status, 0);
  const jaegerExit = readFileSync(join(env['PREBUILD_DIR']!, 'jaeger.exit'), 'utf8');
  const k8s = readFileSync(join(env['PREBUILD_DIR']!, 'kubernetes.exit'), 'utf8');
  const seconds = (text: string) => Number(text.trim().split(' ')[1]);
  assert.ok(seconds(k8s) >= seconds(jaegerExit), `${jaegerExit} then ${k8s}`);
  assert.ok(existsSync(join(dir, `kubernetes-${n}.ran`)));
});

it('reports a failed build with its log, and the wait still succeeds (the stage builds it again)', () => {
  setUp(() => [fakeBuild('jaeger', 0, 3), fakeBuild('kubernetes', 0)]);
  prebuild('start', 'jaeger', 'kubernetes');
  const waited = prebuild('wait', 'jaeger');
  assert.equal(waited.status, 0);
  assert.match(waited.stdout, /jaeger: the background build failed \(exit 3/);
});

it('a build that was not started is not waited for', () => {
  setUp(() => [fakeBuild('jaeger', 0), fakeBuild('kubernetes', 30)]);
  prebuild('start', 'jaeger');
  assert.equal(prebuild('wait', 'jaeger').status, 0);
  const started = Date.now();
  const waited = prebuild('wait', 'kubernetes');
  assert.equal(waited.status, 0);
  assert.match(waited.stdout, /kubernetes: the background build failed \(exit none/);
  assert.ok(Date.now() - started < 15_000);
});

it('stop ends the builds still running', () => {
  setUp(() => [fakeBuild('jaeger', 30), fakeBuild('kubernetes', 30)]);
  prebuild('start', 'jaeger', 'kubernetes');
  const pid = Number(readFileSync(join(env['PREBUILD_DIR']!, 'pid'), 'utf8'));
  assert.doesNotThrow(() => process.kill(pid, 0));
  assert.equal(prebuild('stop').status, 0);
  const until = Date.now() + 10_000;
  let alive = true;
  while (alive && Date.now() < until) {
    try {
      process.kill(pid, 0);
      spawnSync('sleep', ['0.1']);
    } catch {
      alive = false;
    }
  }
  assert.equal(alive, false, 'the background builds were stopped');
  assert.ok(!existsSync(join(dir, `jaeger-${n}.ran`)));
});

it('refuses a build it does not know', () => {
  setUp(() => [fakeBuild('jaeger', 0), fakeBuild('kubernetes', 0)]);
  assert.equal(prebuild('start', 'jaeger', 'centrifugo').status, 2);
  assert.equal(prebuild('wait', 'centrifugo').status, 2);
});
