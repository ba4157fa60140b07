/**
 * What each browser client costs a page (issue "`@gatehouse/client` … ready for people who ship"):
 * `@gatehouse/client` beside centrifuge-js (`centrifuge`, Centrifugo's SDK) and `socket.io-client`,
 * each as a user's page would carry it: a one-line entry that imports the client and makes one,
 * bundled by esbuild for the browser (ES module, minified, ES2022, tree-shaken), then its size
 * minified, gzipped (level 9) and with brotli (quality 11), in bytes and as a ratio to Gatehouse's.
 * The versions bundled are the ones installed in bench/ (its package.json).
 *
 * Run: `node bench/src/client-bundles.bench.ts` (a few seconds; no broker, no network).
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { browserBuild } from '../../packages/client/scripts/browser-bundle.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const clientEntry = fileURLToPath(new URL('../../packages/client/src/index.ts', import.meta.url));

/** Each client as a page imports it and makes one (so nothing it needs is shaken out). */
const clients: Array<{ name: string; version: string; entry: string }> = [
  {
    name: '@gatehouse/client',
    version: packageVersion(fileURLToPath(new URL('../../packages/client/package.json', import.meta.url))),
    entry: `import { Gatehouse } from ${JSON.stringify(clientEntry)}; globalThis.c = new Gatehouse('https://gw.example');`,
  },
  {
    name: 'centrifuge',
    version: installedVersion('centrifuge'),
    entry: `import { Centrifuge } from 'centrifuge'; globalThis.c = new Centrifuge('wss://gw.example/connection/websocket');`,
  },
  {
    name: 'socket.io-client',
    version: installedVersion('socket.io-client'),
    entry: `import { io } from 'socket.io-client'; globalThis.c = io('https://gw.example');`,
  },
];

function packageVersion(path: string): string {
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}

function installedVersion(name: string): string {
  const require = createRequire(import.meta.url);
  const main = require.resolve(name);
  const root = main.slice(0, main.lastIndexOf(`/node_modules/${name}/`) + `/node_modules/${name}/`.length);
  return packageVersion(`${root}package.json`);
}

async function sizes(entry: string) {
  const out = await build({ stdin: { contents: entry, resolveDir: here, loader: 'ts' }, ...browserBuild });
  const code = out.outputFiles[0]!.contents;
  return {
    min: code.length,
    gzip: gzipSync(code, { level: 9 }).length,
    brotli: brotliCompressSync(code, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
}

const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
const rows = [];
for (const c of clients) rows.push({ ...c, ...(await sizes(c.entry)) });
const base = rows[0]!;
console.log('| client | version | minified | gzip | brotli | gzip ÷ Gatehouse |');
console.log('|---|---|---|---|---|---|');
for (const r of rows)
  console.log(
    `| ${r.name} | ${r.version} | ${kib(r.min)} | ${kib(r.gzip)} | ${kib(r.brotli)} | ${(r.gzip / base.gzip).toFixed(2)}× |`,
  );
