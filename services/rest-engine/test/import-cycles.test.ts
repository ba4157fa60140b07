/**
 * No import cycles in the REST engine and the flow engine (issue 25, part 6): their modules import
 * one way (the request pipeline: stages take a context and return, targets never reach back into
 * the exchange). dependency-cruiser reads the imports, type-only ones included, since a cycle of
 * types ties files together for a reader as much as one of values. It also has to find a known
 * cycle, so a tool that read nothing could not pass the check.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cruise, type ICruiseResult } from 'dependency-cruiser';

const root = join(import.meta.dirname, '..', '..', '..');
const checked = ['services/rest-engine/src', 'packages/flows/src'];

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
  it('services/rest-engine/src and packages/flows/src import one way', async () => {
    const { cycles, result } = await cyclesIn(checked);
    assert.deepEqual(cycles, [], `import cycles:\n${cycles.join('\n')}`);
    // It did read them: the pipeline's entry imports every stage.
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
});
