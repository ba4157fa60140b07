/**
 * The package as it is published (`prepack`), in dist/:
 * - esm/: tsc's ES modules, one per source file, with declarations and source maps;
 * - cjs/: the same as one CommonJS file (esbuild), for `require`, beside a copy of the declarations
 *   in a folder marked `"type": "commonjs"`, so TypeScript reads them as CommonJS declarations
 *   under node16/nodenext resolution instead of ES ones masquerading;
 * - browser/gatehouse.min.js: one minified ES module for a `<script type="module">`, with its map;
 * - docs/client.md: the guide, so the README's link (to this file as a CDN of npm packages serves it)
 *   works wherever the package went, and the guide always matches the version installed.
 * Every output is ES2022, what the README promises.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = `${root}dist`;
const entry = `${root}src/index.ts`;

rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
writeFileSync(`${dist}/esm/package.json`, `${JSON.stringify({ type: 'module' })}\n`);

await build({
  entryPoints: [entry],
  outfile: `${dist}/cjs/index.js`,
  bundle: true,
  format: 'cjs',
  platform: 'neutral',
  target: 'es2022',
  sourcemap: true,
  logLevel: 'warning',
});
cpSync(`${dist}/esm`, `${dist}/cjs`, { recursive: true, filter: (path) => !/\.js(\.map)?$/.test(path) });
writeFileSync(`${dist}/cjs/package.json`, `${JSON.stringify({ type: 'commonjs' })}\n`);

mkdirSync(`${dist}/browser`, { recursive: true });
await build({
  entryPoints: [entry],
  outfile: `${dist}/browser/gatehouse.min.js`,
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  sourcemap: true,
  logLevel: 'warning',
});

mkdirSync(`${dist}/docs`, { recursive: true });
cpSync(fileURLToPath(new URL('../../../docs/client.md', import.meta.url)), `${dist}/docs/client.md`);
