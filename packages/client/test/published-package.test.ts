/**
 * The package as users get it: `pnpm pack` (which builds dist/ first, see package.json's prepack)
 * unpacked into a project of its own, outside the workspace, the way npm installs a tarball. From
 * there, plain Node (no TypeScript: Node does not strip types inside node_modules) imports it and
 * receives an event over each transport from a real gateway; and tsc, strict, type-checks a user's
 * file against the shipped declarations, once as a Node project and once as a browser project
 * (DOM types, no Node types).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
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
    await writeFile(join(project, 'user.ts'), typedUser);
  });
  after(async () => {
    await fixture?.stop();
    if (project) await rm(project, { recursive: true, force: true });
    await rm(join(packageDir, 'dist'), { recursive: true, force: true });
  });

  it('ships only the build: JavaScript and declarations, no TypeScript source', async () => {
    const files = await readdir(join(project, 'node_modules', '@gatehouse', 'client'), { recursive: true });
    assert.ok(
      files.includes(join('dist', 'index.js')) && files.includes(join('dist', 'index.d.ts')),
      `${files}`,
    );
    assert.deepEqual(
      files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')),
      [],
      'TypeScript source in the package',
    );
  });

  for (const transport of ['websocket', 'sse', 'longpolling']) {
    it(`plain Node imports it and receives an event over ${transport}`, async () => {
      let settled = false;
      const user = run(process.execPath, ['user.mjs', fixture.edge, transport], {
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

  for (const [kind, compilerOptions] of [
    ['a Node project', { lib: ['es2022'], types: ['node'] }],
    ['a browser project', { lib: ['es2022', 'dom'], types: [] }],
  ] as const) {
    it(`type-checks a user's code against its declarations in ${kind}`, async () => {
      await writeFile(
        join(project, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'es2022',
            module: 'nodenext',
            moduleResolution: 'nodenext',
            strict: true,
            noEmit: true,
            ...compilerOptions,
          },
          files: ['user.ts'],
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
