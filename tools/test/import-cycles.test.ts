/**
 * No import cycles in any source folder: every package's, every service's, the embedded gateway's
 * and the benchmarks' (issue 25, part 6, at first the REST engine and the flow engine only). A file
 * that imports one that imports it back can only be read, tested and changed together with it.
 * dependency-cruiser reads the imports, type-only ones included, since a cycle of types ties files
 * together for a reader as much as one of values, and dynamic ones, since a lazily loaded module is
 * still one a reader follows. It also has to find a known cycle, so a tool that read nothing could
 * not pass the check.
 */
import assert from 'node:assert/strict';
import { globSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cruise, type ICruiseResult } from 'dependency-cruiser';

const root = join(import.meta.dirname, '..', '..');
const patterns = ['packages/*/src', 'services/*/src', 'embedded/src', 'bench/src'];
const foldersOf = new Map(patterns.map((pattern) => [pattern, globSync(pattern, { cwd: root }).sort()]));
const checked = [...foldersOf.values()].flat();

/** Each cycle dependency-cruiser finds among the files under `folders`, as `a → b → a`. */
async function cyclesIn(folders: string[]): Promise<{ cycles: string[]; result: ICruiseResult }> {
  const reported = await cruise(folders, {
    ruleSet: { forbidden: [{ name: 'no-circular', severity: 'error', from: {}, to: { circular: true } }] },
    validate: true,
    tsPreCompilationDeps: true,
    exclude: { path: 'node_modules' },
    doNotFollow: { path: 'node_modules' },
    baseDir: root,
  });
  if (typeof reported.output === 'string') throw new Error('dependency-cruiser answered text, not a result');
  const result = reported.output;
  const cycles = result.summary.violations.map((v) =>
    [v.from, ...(v.cycle ?? []).map((step) => step.name)].join(' → '),
  );
  return { cycles, result };
}

describe('import cycles', () => {
  it('every package, service, the embedded gateway and the benchmarks import one way', async () => {
    const { cycles, result } = await cyclesIn(checked);
    assert.deepEqual(cycles, [], `import cycles:\n${cycles.join('\n')}`);
    // It did read them: each pattern's folders, every folder's files, and their imports (the
    // pipeline's entry imports every stage).
    for (const [pattern, found] of foldersOf) assert.ok(found.length > 0, `no folder matches ${pattern}`);
    for (const folder of checked) {
      assert.ok(
        result.modules.some((m) => m.source.startsWith(`${folder}/`)),
        `no file of ${folder} was read`,
      );
    }
    const pipeline = result.modules.find((m) => m.source.endsWith('pipeline/request-pipeline.ts'));
    assert.ok(pipeline, 'request-pipeline.ts was not read');
    const stages = pipeline.dependencies.filter((d) => /-stage\.ts$/.test(d.resolved));
    assert.ok(stages.length >= 7, `request-pipeline.ts imports ${stages.length} stages`);
  });

  it('finds a cycle of type-only imports', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'import-cycle-'));
    writeFileSync(join(dir, 'a.ts'), "import type { B } from './b.ts';\nexport interface A { b: B }\n");
    writeFileSync(join(dir, 'b.ts'), "import type { A } from './a.ts';\nexport interface B { a: A }\n");
    const { cycles } = await cyclesIn([dir]);
    assert.equal(cycles.length, 1, cycles.join('\n'));
    assert.match(cycles[0]!, /a\.ts → .*b\.ts → .*a\.ts$/);
  });

  it('finds a cycle through a dynamic import', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'import-cycle-'));
    writeFileSync(join(dir, 'a.ts'), "export const load = () => import('./b.ts');\n");
    writeFileSync(join(dir, 'b.ts'), "import { load } from './a.ts';\nexport const again = load;\n");
    const { cycles } = await cyclesIn([dir]);
    assert.equal(cycles.length, 1, cycles.join('\n'));
    assert.match(cycles[0]!, /a\.ts → .*b\.ts → .*a\.ts$/);
  });
});
