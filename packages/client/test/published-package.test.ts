/**
 * The package as users get it: `pnpm pack` (which builds dist/ first, see package.json's prepack)
 * unpacked into a project of its own, outside the workspace, the way npm installs a tarball. From
 * there, plain Node (no TypeScript: Node does not strip types inside node_modules) imports it and
 * receives an event over each transport from a real gateway, as an ES module and through `require`;
 * and tsc, strict, type-checks a user's file against the shipped declarations under every module
 * resolution a project may use (node10, node16, nodenext, bundler), as a Node project and as a
 * browser project (DOM types, no Node types), and a CommonJS user's file (`.cts`). In Chromium, a
 * page bundled by esbuild from the installed package, and a page importing its minified browser
 * module (`@gatehouse/client/browser`) as it is, each receive an event.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { launchChromium } from '@gatehouse/testkit';
import { build } from 'esbuild';
import { startGatewayFixture, type GatewayFixture } from './gateway-fixture.ts';

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

/** A user's Node script: connect, receive one event, print it, close. */
const nodeUser = `
import { Gatehouse } from '@gatehouse/client';
const [url, transport] = process.argv.slice(2);
const gw = new Gatehouse(url, { transports: [transport], subscriptions: [{ eventType: 'order.updated' }] });
const timer = setTimeout(() => { console.error('no event within 30 s'); process.exit(1); }, 30_000);
gw.on('state', (s) => { if (s.state === 'connected') console.log('connected ' + gw.transport); });
gw.on('event', (e) => { console.log('event ' + e.id); clearTimeout(timer); gw.close(); });
`;

/** The same user in CommonJS: `require`, no top-level await. */
const commonJsUser = nodeUser.replace(
  "import { Gatehouse } from '@gatehouse/client';",
  "const { Gatehouse } = require('@gatehouse/client');",
);

/** A user's TypeScript, with the types the README promises (and one misuse the types must refuse). */
const typedUser = `
import { Gatehouse, SubscriptionError, type CloudEvent, type ConnectionState, type Subscription } from '@gatehouse/client';
const gw = new Gatehouse('https://gw.example.com', {
  token: async () => 'jwt',
  transports: ['websocket', 'sse', 'longpolling'],
});
gw.on('event', (event: CloudEvent) => event.id.length);
gw.on('state', (state: ConnectionState) => state.state);
gw.on('resync', () => undefined);
const wanted: Subscription[] = [{ eventType: 'order.updated', oneOf: [{ customer: 'c-17' }] }];
gw.subscribe(wanted).catch((err: unknown) => err instanceof SubscriptionError);
// @ts-expect-error: not a transport
new Gatehouse('https://gw.example.com', { transports: ['carrier-pigeon'] });
gw.close();
`;

describe('@gatehouse/client as published', () => {
  let fixture: GatewayFixture;
  let project: string;

  before(async () => {
    fixture = await startGatewayFixture();
    project = await mkdtemp(join(tmpdir(), 'gatehouse-client-user-'));
    const packed = join(project, 'packed');
    await mkdir(packed);
    await run('pnpm', ['pack', '--pack-destination', packed], { cwd: packageDir });
    const [tarball = 'nothing'] = await readdir(packed);
    assert.ok(tarball.endsWith('.tgz'), `pnpm pack made ${tarball}`);
    const installed = join(project, 'node_modules', '@gatehouse', 'client');
    await mkdir(installed, { recursive: true });
    await run('tar', ['-xzf', join(packed, tarball), '-C', installed, '--strip-components=1']);
    await mkdir(join(project, 'node_modules', '@types'), { recursive: true });
    await symlink(
      join(repoRoot, 'node_modules', '@types', 'node'),
      join(project, 'node_modules', '@types', 'node'),
    );
    await writeFile(
      join(project, 'package.json'),
      JSON.stringify({ name: 'user', type: 'module', private: true }),
    );
    await writeFile(join(project, 'user.mjs'), nodeUser);
    await writeFile(join(project, 'user.cjs'), commonJsUser);
    await writeFile(join(project, 'user.ts'), typedUser);
    await writeFile(
      join(project, 'user.cts'),
      typedUser.replace(/^import \{ (.*) \} from '@gatehouse\/client';$/m, (_, names: string) =>
        [
          `import type { ${names
            .split(', ')
            .filter((n) => n.startsWith('type '))
            .map((n) => n.slice(5))
            .join(', ')} } from '@gatehouse/client';`,
          `const { ${names
            .split(', ')
            .filter((n) => !n.startsWith('type '))
            .join(', ')} } = require('@gatehouse/client') as typeof import('@gatehouse/client');`,
        ].join('\n'),
      ),
    );
  });
  after(async () => {
    await fixture?.stop();
    if (project) await rm(project, { recursive: true, force: true });
    await rm(join(packageDir, 'dist'), { recursive: true, force: true });
  });

  it('ships only the build: ES modules, CommonJS, a minified browser module, declarations and maps; no side effects', async () => {
    const installed = join(project, 'node_modules', '@gatehouse', 'client');
    const files = await readdir(installed, { recursive: true });
    for (const file of [
      'esm/index.js',
      'esm/index.js.map',
      'esm/index.d.ts',
      'cjs/index.js',
      'cjs/index.js.map',
      'cjs/index.d.ts',
      'cjs/package.json',
      'browser/gatehouse.min.js',
      'browser/gatehouse.min.js.map',
    ])
      assert.ok(files.includes(join('dist', file)), `dist/${file} missing: ${files}`);
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    assert.equal(manifest['sideEffects'], false);
    assert.equal(manifest['license'], 'Apache-2.0');
    // The licence text itself, the repository's (pnpm packs the workspace root's LICENSE).
    assert.equal(
      await readFile(join(installed, 'LICENSE'), 'utf8'),
      await readFile(join(repoRoot, 'LICENSE'), 'utf8'),
    );
    // The README's links work once published: absolute, and the guide it names is in the package.
    const readme = await readFile(join(installed, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
    assert.ok(links.length > 0);
    assert.deepEqual(
      links.filter((l) => !/^https:\/\//.test(l)),
      [],
      'relative links break on a registry page',
    );
    assert.ok(links.includes('https://cdn.jsdelivr.net/npm/@gatehouse/client/dist/docs/client.md'));
    assert.equal(
      await readFile(join(installed, 'dist/docs/client.md'), 'utf8'),
      await readFile(join(repoRoot, 'docs/client.md'), 'utf8'),
    );
    // The maps carry their sources: the TypeScript is not shipped beside them.
    const map = JSON.parse(await readFile(join(installed, 'dist/esm/gatehouse.js.map'), 'utf8')) as {
      sourcesContent?: string[];
    };
    assert.match(map.sourcesContent?.[0] ?? '', /class Gatehouse/);
    assert.deepEqual(
      files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')),
      [],
      'TypeScript source in the package',
    );
  });

  for (const [script, transport] of [
    ['user.mjs', 'websocket'],
    ['user.mjs', 'sse'],
    ['user.mjs', 'longpolling'],
    ['user.cjs', 'sse'],
  ] as const) {
    it(`plain Node ${script.endsWith('.cjs') ? 'requires' : 'imports'} it and receives an event over ${transport}`, async () => {
      let settled = false;
      const user = run(process.execPath, [script, fixture.edge, transport], {
        cwd: project,
        timeout: 60_000,
      });
      // Published once the client says it is connected.
      const published = (async () => {
        for (let n = 1; n <= 300; n++) {
          await fixture.publish(Date.now() * 1000 + n);
          await new Promise((resolve) => setTimeout(resolve, 100));
          if (settled) return;
        }
      })();
      const { stdout } = await user.finally(() => {
        settled = true;
      });
      await published;
      assert.match(stdout, new RegExp(`^connected ${transport}\\nevent e-\\d+\\n`));
    });
  }

  /** A page's script: connect over `transport`, and say the first event's id in `window.received`. */
  const pageUser = (from: string) => `
import { Gatehouse } from '${from}';
const [url, transport] = location.hash.slice(1).split(',');
window.received = new Promise((resolve) => {
  const gw = new Gatehouse(decodeURIComponent(url), { transports: [transport], subscriptions: [{ eventType: 'order.updated' }] });
  gw.on('event', (e) => { resolve(transport + ' ' + e.id); gw.close(); });
});
`;

  describe('in Chromium', () => {
    let browser: Awaited<ReturnType<typeof launchChromium>>;
    let site: Server;
    let origin: string;
    /** The pages, by path: served from an origin of their own, as a user's site would. */
    const pages = new Map<string, { type: string; body: string }>();

    before(async () => {
      const bundled = await build({
        stdin: { contents: pageUser('@gatehouse/client'), resolveDir: project, loader: 'js' },
        bundle: true,
        format: 'esm',
        write: false,
        logLevel: 'silent',
      });
      const installed = join(project, 'node_modules', '@gatehouse', 'client');
      const html = (script: string) => `<!doctype html><script type="module" src="${script}"></script>`;
      pages.set('/bundled.html', { type: 'text/html', body: html('/bundled.js') });
      pages.set('/bundled.js', { type: 'text/javascript', body: bundled.outputFiles[0]!.text });
      pages.set('/module.html', { type: 'text/html', body: html('/module.js') });
      pages.set('/module.js', { type: 'text/javascript', body: pageUser('/gatehouse.min.js') });
      pages.set('/gatehouse.min.js', {
        type: 'text/javascript',
        body: await readFile(join(installed, 'dist/browser/gatehouse.min.js'), 'utf8'),
      });
      site = createServer((req, res) => {
        const page = pages.get(req.url ?? '');
        res.writeHead(page ? 200 : 404, { 'content-type': page?.type ?? 'text/plain' });
        res.end(page?.body ?? 'not found');
      });
      await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
      origin = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      site?.close();
    });

    for (const [page, transport] of [
      ['bundled.html', 'websocket'],
      ['bundled.html', 'sse'],
      ['bundled.html', 'longpolling'],
      ['module.html', 'sse'],
    ] as const) {
      it(`${page === 'bundled.html' ? 'a page bundled from the package' : 'a page importing its browser module'} receives an event over ${transport}`, async () => {
        const tab = await browser.newPage();
        try {
          const errors: string[] = [];
          tab.on('pageerror', (err) => errors.push(err.message));
          await tab.goto(`${origin}/${page}#${encodeURIComponent(fixture.edge)},${transport}`);
          let settled = false;
          const received = tab
            .waitForFunction(() => (globalThis as unknown as { received?: Promise<string> }).received, null, {
              timeout: 30_000,
            })
            .then(() => tab.evaluate(() => (globalThis as unknown as { received: Promise<string> }).received))
            .finally(() => {
              settled = true;
            });
          for (let n = 1; n <= 300 && !settled; n++) {
            await fixture.publish(Date.now() * 1000 + n);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          assert.match(await received, new RegExp(`^${transport} e-\\d+$`));
          assert.deepEqual(errors, []);
        } finally {
          await tab.close();
        }
      });
    }
  });

  const resolutions = {
    node10: { module: 'commonjs', moduleResolution: 'node10', ignoreDeprecations: '6.0' },
    node16: { module: 'node16', moduleResolution: 'node16' },
    nodenext: { module: 'nodenext', moduleResolution: 'nodenext' },
    bundler: { module: 'esnext', moduleResolution: 'bundler' },
  };
  for (const [kind, compilerOptions, file] of [
    ...Object.entries(resolutions).map(
      ([name, options]) =>
        [`a Node project (${name})`, { lib: ['es2022'], types: ['node'], ...options }, 'user.ts'] as const,
    ),
    [
      'a browser project (bundler)',
      { lib: ['es2022', 'dom'], types: [], ...resolutions.bundler },
      'user.ts',
    ] as const,
    [
      'a CommonJS file (nodenext)',
      { lib: ['es2022'], types: ['node'], ...resolutions.nodenext },
      'user.cts',
    ] as const,
  ]) {
    it(`type-checks a user's code against its declarations in ${kind}`, async () => {
      await writeFile(
        join(project, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'es2022',
            strict: true,
            noEmit: true,
            ...compilerOptions,
          },
          files: [file],
        }),
      );
      const tsc = join(repoRoot, 'node_modules', '.bin', 'tsc');
      const result = await run(tsc, ['-p', 'tsconfig.json'], { cwd: project }).catch(
        (err: { stdout: string }) => err,
      );
      assert.equal(result.stdout, '', `tsc in ${kind}:\n${result.stdout}`);
    });
  }
});
