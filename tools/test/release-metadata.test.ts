/**
 * What a user installing Gatehouse sees of its licence and version: the Apache License 2.0 (the
 * licence of both systems the product follows) in LICENSE, in every package.json, on the chart and
 * on the image (the packed client's copy: packages/client/test/published-package.test.ts); and one Semantic
 * Versioning number for the release, the same in every package, the chart (`version`,
 * `appVersion`), the image's label and CHANGELOG.md's newest release.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { globSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';

const root = join(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
/** SHA-256 of https://www.apache.org/licenses/LICENSE-2.0.txt, the text every Apache-2.0 project ships. */
const apache2Sha256 = 'c71d239df91726fc519c6eb72d318ec65820627232b2f796219e87dcf35d0ab4';
/** Semantic Versioning 2.0.0's own pattern (semver.org), without build metadata. */
const semver =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?$/;

interface PackageJson {
  name: string;
  version: string;
  license?: string;
  private?: boolean;
}

/** Every workspace package's package.json, found through pnpm-workspace.yaml's globs. */
function workspacePackages(): Array<{ path: string; json: PackageJson }> {
  const globs = (parse(read('pnpm-workspace.yaml')) as { packages: string[] }).packages;
  const dirs = globSync(globs, { cwd: root });
  return ['.', ...dirs].map((dir) => {
    const path = join(dir, 'package.json');
    return { path, json: JSON.parse(read(path)) as PackageJson };
  });
}

/** The LABELs of the Dockerfile's last stage (the image users run), continuation lines joined. */
function imageLabels(): Map<string, string> {
  const stages = read('Dockerfile')
    .replace(/\\\n/g, ' ')
    .split(/^FROM /m);
  const labels = new Map<string, string>();
  for (const line of stages
    .at(-1)!
    .split('\n')
    .filter((l) => l.startsWith('LABEL ')))
    for (const m of line.matchAll(/([\w.-]+)="([^"]*)"/g)) labels.set(m[1]!, m[2]!);
  return labels;
}

/** The newest released version CHANGELOG.md names (`## [x.y.z] - date`), past `[Unreleased]`. */
function changelogRelease(): string | undefined {
  return /^## \[(\d[^\]]*)\] - \d{4}-\d{2}-\d{2}$/m.exec(read('CHANGELOG.md'))?.[1];
}

const release = (JSON.parse(read('package.json')) as PackageJson).version;

describe('licence', () => {
  it('LICENSE is the Apache License 2.0, word for word', () => {
    assert.equal(createHash('sha256').update(read('LICENSE')).digest('hex'), apache2Sha256);
  });

  it('every workspace package.json says Apache-2.0', () => {
    const packages = workspacePackages();
    assert.ok(packages.length > 15, `only ${packages.length} packages found`);
    const other = packages.filter((p) => p.json.license !== 'Apache-2.0').map((p) => p.path);
    assert.deepEqual(other, []);
  });

  it('the chart and the image carry it', () => {
    const chart = parse(read('charts/gatehouse/Chart.yaml')) as { annotations?: Record<string, string> };
    assert.equal(chart.annotations?.['artifacthub.io/license'], 'Apache-2.0');
    assert.equal(imageLabels().get('org.opencontainers.image.licenses'), 'Apache-2.0');
  });
});

describe('one release version', () => {
  it('is a Semantic Versioning number', () => {
    assert.match(release, semver);
  });

  it('is every package’s version', () => {
    const other = workspacePackages()
      .filter((p) => p.json.version !== release)
      .map((p) => `${p.path}: ${p.json.version}`);
    assert.deepEqual(other, []);
  });

  it("is the chart's version and appVersion (the image tag's default) and the image's label", () => {
    const chart = parse(read('charts/gatehouse/Chart.yaml')) as { version: string; appVersion: string };
    assert.equal(chart.version, release);
    assert.equal(chart.appVersion, release);
    assert.equal(imageLabels().get('org.opencontainers.image.version'), release);
  });

  it("is CHANGELOG.md's newest release", () => {
    assert.equal(changelogRelease(), release);
  });
});
