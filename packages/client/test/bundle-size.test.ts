/**
 * The browser bundle stays small: the package's entry bundled for the browser by esbuild, minified
 * and gzipped, under 7.125 KiB (6 KiB until acknowledged delivery, 7 KiB until its bound on the
 * events a client holds: maxAttempts and maxPending). It also proves the entry needs nothing Node-only.
 */
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { it } from 'node:test';
import { browserBundle } from '../scripts/browser-bundle.ts';

const LIMIT = 7 * 1024 + 128;

it('bundles for the browser to under 7.125 KiB minified and gzipped', async () => {
  const code = await browserBundle();
  const gzipped = gzipSync(code, { level: 9 }).length;
  console.log(`@gatehouse/client browser bundle: ${code.length} bytes minified, ${gzipped} bytes gzipped`);
  assert.ok(gzipped < LIMIT, `${gzipped} bytes gzipped, the limit is ${LIMIT}`);
  // Nothing of Node's own modules made it in.
  assert.doesNotMatch(new TextDecoder().decode(code), /node:/);
});
