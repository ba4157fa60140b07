/**
 * The package bundled for the browser by esbuild (ES module, minified, ES2022), as a user's build
 * would make it: measured by the size test, loaded by the Chromium tests, served by `make run`'s
 * demo page. `node packages/client/scripts/browser-bundle.ts <file>` writes it to a file.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build } from 'esbuild';

const entry = fileURLToPath(new URL('../src/index.ts', import.meta.url));

/** How a user's build bundles a page: also what bench/src/client-bundles.bench.ts bundles peers with. */
export const browserBuild = {
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  write: false,
  logLevel: 'silent',
} as const satisfies BuildOptions;

export async function browserBundle(): Promise<Uint8Array> {
  const result = await build({ entryPoints: [entry], ...browserBuild });
  return result.outputFiles[0]!.contents;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = resolve(process.argv[2] ?? 'gatehouse-client.js');
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, await browserBundle());
}
