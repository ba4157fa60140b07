/**
 * A folder under a service's src/ that holds an index.ts is reached through it (issue 41): code
 * outside the folder (a sibling folder, the service's top-level files, a parent folder's files)
 * imports only its index.ts, while the files inside import each other directly. So what a folder
 * offers the rest of its service is the list in its index.ts, and nothing else of it is used from
 * outside. dependency-cruiser reads the imports of every services/<name>/src, type-only and dynamic
 * ones included, against one rule per such folder. It also has to report known bypasses, so a tool
 * that read nothing could not pass the check.
 */
import assert from 'node:assert/strict';
import { existsSync, globSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cruise, type IForbiddenRuleType, type ICruiseResult } from 'dependency-cruiser';

const root = join(import.meta.dirname, '..', '..');

/** Every services/<name>/src, relative to the repository root. */
const serviceSources = globSync('services/*/src', { cwd: root }).sort();

/** The folders under `src` (relative to `baseDir`) that hold an index.ts, nested ones too. */
function facedFolders(baseDir: string, src: string): string[] {
  const found: string[] = [];
  const visit = (dir: string) => {
    for (const entry of readdirSync(join(baseDir, dir), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const folder = `${dir}/${entry.name}`;
      if (existsSync(join(baseDir, folder, 'index.ts'))) found.push(folder);
      visit(folder);
    }
  };
  visit(src);
  return found;
}

/** The .ts files under `src` (relative to `baseDir`). */
function sourceFiles(baseDir: string, src: string): string[] {
  return readdirSync(join(baseDir, src), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts'))
    .map((path) => `${src}/${path}`);
}

const literally = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Each import of a faced folder's inside from outside it, as `from → to`, under the `sources`. */
async function bypassesIn(
  baseDir: string,
  sources: string[],
): Promise<{ bypasses: string[]; folders: string[]; result: ICruiseResult }> {
  const folders = sources.flatMap((src) => facedFolders(baseDir, src));
  const forbidden: IForbiddenRuleType[] = folders.map((folder) => ({
    name: `through ${folder}/index.ts`,
    severity: 'error',
    from: { pathNot: `^${literally(folder)}/` },
    to: { path: `^${literally(folder)}/`, pathNot: `^${literally(folder)}/index\\.ts$` },
  }));
  const reported = await cruise(sources, {
    ruleSet: { forbidden },
    validate: true,
    tsPreCompilationDeps: true,
    includeOnly: `^(${sources.map(literally).join('|')})/`,
    exclude: { path: 'node_modules' },
    doNotFollow: { path: 'node_modules' },
    baseDir,
  });
  if (typeof reported.output === 'string') throw new Error('dependency-cruiser answered text, not a result');
  const result = reported.output;
  const bypasses = result.summary.violations.map((v) => `${v.from} → ${v.to}`);
  return { bypasses, folders, result };
}

describe('folder faces', () => {
  it('every services/<name>/src folder with an index.ts is imported from outside only through it', async () => {
    const { bypasses, folders, result } = await bypassesIn(root, serviceSources);
    assert.deepEqual(bypasses, [], `imports past a folder's index.ts:\n${bypasses.join('\n')}`);
    // It did read them: every source file is a module of the result, and there are folders to check.
    const read = new Set(result.modules.map((m) => m.source));
    const unread = serviceSources.flatMap((src) => sourceFiles(root, src)).filter((file) => !read.has(file));
    assert.deepEqual(unread, [], 'source files dependency-cruiser did not read');
    assert.ok(folders.length > 0, 'no folder with an index.ts under services/*/src');
  });

  it('reports an import past the index.ts: type-only, dynamic, from a top-level file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'folder-faces-'));
    const write = (path: string, text: string) => {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    };
    write('src/a/inner.ts', 'export interface Inner { n: number }\nexport const inner = 1;\n');
    write('src/a/index.ts', "export { type Inner, inner } from './inner.ts';\n");
    write('src/b/index.ts', "export { outer } from './user.ts';\n");
    // Through the face: allowed. Past it, type-only: reported.
    write(
      'src/b/user.ts',
      "import { inner } from '../a/index.ts';\nimport type { Inner } from '../a/inner.ts';\n" +
        'export const outer: Inner = { n: inner };\n',
    );
    write('src/top.ts', "import { inner } from './a/inner.ts';\nexport const top = inner;\n");
    write('src/lazy.ts', "export const load = () => import('./a/inner.ts');\n");
    const { bypasses } = await bypassesIn(dir, ['src']);
    assert.deepEqual(bypasses.sort(), [
      'src/b/user.ts → src/a/inner.ts',
      'src/lazy.ts → src/a/inner.ts',
      'src/top.ts → src/a/inner.ts',
    ]);
  });
});
