/**
 * tools/mercury.sh decides whether Mercury can be built here: it needs a JDK of version 21 or newer
 * (Debian's OpenJDK 17 is too old for Mercury 4.x) and Maven, and where one is missing it says so in
 * one "skipped" line and exits 0, so that `make bench` runs every other benchmark. `path` prints
 * nothing then, which mercury.bench.ts reads as "skip". Fake JDKs answer `java -version` as real ones.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, it } from 'node:test';

const script = fileURLToPath(new URL('../mercury.sh', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mercury-script-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A JDK folder whose java prints `version` the way OpenJDK does (on stderr). */
function fakeJdk(jvmDir: string, name: string, version: string): void {
  const bin = join(jvmDir, name, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'java'), `#!/bin/sh\necho 'openjdk version "${version}" 2025-04-15' >&2\n`);
  writeFileSync(join(bin, 'javac'), '#!/bin/sh\n');
  chmodSync(join(bin, 'java'), 0o755);
  chmodSync(join(bin, 'javac'), 0o755);
}

function run(jvmDir: string) {
  const env = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    MERCURY_JVM_DIR: jvmDir,
    MVN: join(dir, 'no-maven'),
  };
  return spawnSync('bash', [script, 'path'], { env, encoding: 'utf8', timeout: 30_000 });
}

it('skips with one line when no JDK is installed', () => {
  const jvm = join(dir, 'none');
  mkdirSync(jvm);
  const r = run(jvm);
  assert.equal(r.status, 0);
  assert.equal(r.stdout, '');
  assert.equal(
    r.stderr,
    `mercury: skipped: needs Java 21+ (no JDK 21 or newer in MERCURY_JAVA_HOME, JAVA_HOME or ${jvm})\n`,
  );
});

it('skips when the only JDK is 17', () => {
  const jvm = join(dir, 'seventeen');
  fakeJdk(jvm, 'java-17-openjdk-amd64', '17.0.15');
  const r = run(jvm);
  assert.equal(r.status, 0);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^mercury: skipped: needs Java 21\+/);
});

it('takes a JDK 21 beside a 17 and goes on to the next check (Maven)', () => {
  const jvm = join(dir, 'both');
  fakeJdk(jvm, 'java-17-openjdk-amd64', '17.0.15');
  fakeJdk(jvm, 'temurin-21-jdk-amd64', '21.0.9');
  const r = run(jvm);
  assert.equal(r.status, 0);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr, 'mercury: skipped: needs Maven (Debian package maven)\n');
});
