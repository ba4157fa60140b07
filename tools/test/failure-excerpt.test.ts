/**
 * What the end of a CI log says of a failed test: node's spec reporter prints each failing test
 * with its message, its stack and the error's properties; only the name and the message fit in the
 * few lines a CI log keeps. The text below is node 24's own output for such a run.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failureExcerpt } from '../failure-excerpt.ts';

const stack = (from: string) =>
  [
    `      at TestContext.<anonymous> (file:///ci/${from}:163:14)`,
    '      at process.processTicksAndRejections (node:internal/process/task_queues:104:5)',
    '      at async Test.run (node:internal/test_runner/test:1409:7)',
    '      at async Promise.all (index 0)',
    '      at async Suite.run (node:internal/test_runner/test:1905:7) {',
    '    generatedMessage: false,',
    "    code: 'ERR_ASSERTION',",
    '    actual: false,',
    '    expected: true,',
    "    operator: '==',",
    "    diff: 'simple'",
    '  }',
  ].join('\n');

const podLogs = Array.from({ length: 30 }, (_, i) => `  {"level":"info","msg":"pod log line ${i}"}`).join(
  '\n',
);

const run = [
  'ℹ tests 5',
  'ℹ fail 2',
  '✖ failing tests:',
  '',
  'test at test-deploy/test/helm-release.test.ts:134:3',
  '✖ runs every component from the image as a non-root user (180012.5ms)',
  '  AssertionError [ERR_ASSERTION]: publisher: gw-publisher-7d9 ready=false restarts=1 last end: Error (exit 1)',
  podLogs,
  stack('helm-release.test.ts'),
  '',
  'test at test-deploy/test/helm-release.test.ts:183:3',
  '✖ delivers events over SSE and WebSocket (5.1ms)',
  '  Error: connect ECONNREFUSED 127.0.0.1:30080',
  stack('helm-release.test.ts'),
  'k8s: kubelet stopped: 0.03s',
  'k8s: down in 42.61s',
  'make[2]: *** [Makefile:180: helm-test] Error 1',
].join('\n');

describe('failureExcerpt', () => {
  it('keeps each failing test with where it is and the start of its message, without stacks or what follows', () => {
    const excerpt = failureExcerpt(run);
    const lines = excerpt.split('\n');
    assert.equal(lines[0], '✖ failing tests:');
    assert.ok(excerpt.includes('test at test-deploy/test/helm-release.test.ts:134:3'));
    assert.ok(excerpt.includes('✖ runs every component from the image as a non-root user (180012.5ms)'));
    assert.ok(
      excerpt.includes('publisher: gw-publisher-7d9 ready=false restarts=1 last end: Error (exit 1)'),
    );
    assert.ok(excerpt.includes('✖ delivers events over SSE and WebSocket (5.1ms)'));
    assert.ok(excerpt.includes('  Error: connect ECONNREFUSED 127.0.0.1:30080'));
    assert.doesNotMatch(excerpt, /^\s+at |ERR_ASSERTION'|generatedMessage|k8s:|make\[2\]/m);
    // A message's first lines, then a mark of how many more it had.
    assert.ok(excerpt.includes('pod log line 4'));
    assert.doesNotMatch(excerpt, /pod log line 5\b/);
    assert.ok(excerpt.includes('  [… 25 more lines of its message]'));
    assert.ok(lines.length <= 20, `${lines.length} lines`);
  });

  it('keeps at most maxLines lines, and says how many failing tests it left out', () => {
    const many = [
      '✖ failing tests:',
      ...Array.from(
        { length: 30 },
        (_, i) => `\ntest at a.test.ts:${i}:1\n✖ test ${i} (1ms)\n  Error: boom ${i}\n${stack('a.test.ts')}`,
      ),
    ].join('\n');
    const lines = failureExcerpt(many, 40).split('\n');
    assert.ok(lines.length <= 41, `${lines.length} lines`);
    const kept = lines.filter((l) => l.startsWith('✖ test ')).length;
    assert.ok(kept >= 9, `${kept} tests kept`);
    assert.equal(lines.at(-1), `[… ${30 - kept} more failing tests]`);
    assert.ok(lines.includes('  Error: boom 0'));
    assert.ok(lines.includes(`  Error: boom ${kept - 1}`));
  });

  it('keeps the last lines of a log without a failing-tests section (a script that failed before its tests)', () => {
    const log = Array.from({ length: 100 }, (_, i) => `step ${i}`).join('\n');
    const lines = failureExcerpt(log, 10).split('\n');
    assert.deepEqual(lines, [
      '[… 90 lines before]',
      ...Array.from({ length: 10 }, (_, i) => `step ${90 + i}`),
    ]);
  });
});
