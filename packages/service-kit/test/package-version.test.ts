import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { packageVersion } from '../src/index.ts';

describe('packageVersion', () => {
  it('reads the nearest package.json above the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'package-version-'));
    try {
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'outer', version: '9.9.9' }));
      mkdirSync(join(dir, 'inner', 'src'), { recursive: true });
      writeFileSync(join(dir, 'inner', 'package.json'), JSON.stringify({ name: 'inner', version: '2.3.4' }));
      assert.equal(packageVersion(join(dir, 'inner', 'src', 'main.ts')), '2.3.4');
      assert.equal(packageVersion(join(dir, 'other.ts')), '9.9.9');
      writeFileSync(join(dir, 'inner', 'package.json'), JSON.stringify({ name: 'no-version' }));
      assert.equal(packageVersion(join(dir, 'inner', 'src', 'main.ts')), undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("is this package's own version for its files, undefined without a file", () => {
    assert.equal(packageVersion(fileURLToPath(import.meta.url)), '0.1.0');
    assert.equal(packageVersion(undefined), undefined);
  });
});
