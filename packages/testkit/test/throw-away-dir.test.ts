/** A throw-away folder (and the certificates made in one) is gone once its process has exited. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';

const kit = fileURLToPath(new URL('../src/index.ts', import.meta.url));

it('removes the folder, with what was written in it, when the process exits', () => {
  const script = `
    import { selfSignedCertificate } from ${JSON.stringify(kit)};
    import { dirname } from 'node:path';
    const { certFile } = selfSignedCertificate();
    console.log(dirname(certFile));
  `;
  const dir = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
  }).trim();
  assert.match(dir, /gw-cert-/);
  assert.equal(existsSync(dir), false, `${dir} left behind`);
});
