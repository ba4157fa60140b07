/**
 * The table at the end of .ci/run (tools/ci-report.ts): every stage with its time and budget, a
 * stage over its budget by half named in a warning, the 15 slowest test files, longest first, and
 * last why what failed failed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { report, stageBudgets } from '../ci-report.ts';

const folder = mkdtempSync(join(tmpdir(), 'ci-report-'));
after(() => rmSync(folder, { recursive: true, force: true }));

describe('ci-report', () => {
  it('lists each stage with its time, budget and outcome, and warns of one over its budget by half', () => {
    const budget = stageBudgets['node tests']!;
    writeFileSync(
      join(folder, 'stages.tsv'),
      `lint\t3\t0\ncompose stack\t${stageBudgets['compose stack']! + 10}\t0\nnode tests\t${Math.ceil(budget * 1.5) + 1}\t1\n`,
    );
    const text = report(folder, 1234);
    assert.match(text, /^lint +3 s +20 s {2}ok$/m);
    assert.match(
      text,
      new RegExp(
        `^node tests +${Math.ceil(budget * 1.5) + 1} s +${budget} s  failed \\(exit 1\\)  ⚠ over budget$`,
        'm',
      ),
    );
    assert.match(text, /^total +1234 s +1500 s/m);
    assert.match(text, /⚠ stage "node tests" took \d+ s, over its budget of \d+ s by more than half/);
    // Over its budget, but not by half: no warning.
    assert.doesNotMatch(text, /stage "compose stack"/);
  });

  it('marks a stage that ran beside the node tests', () => {
    writeFileSync(join(folder, 'stages.tsv'), 'compose stack\t150\t0\tdeployment\nnode tests\t900\t0\t\n');
    const text = report(folder, 1000);
    assert.match(text, /^compose stack +150 s +\d+ s {2}ok \(beside the node tests, in "deployment"\)$/m);
    assert.match(text, /^node tests +900 s +\d+ s {2}ok$/m);
  });

  it('says a stage that outlived its limit timed out (tools/timed.sh --limit ends it with 124)', () => {
    writeFileSync(join(folder, 'stages.tsv'), 'compose stack\t1500\t124\tdeployment\nlint\t3\t124\t\n');
    const text = report(folder, 1600);
    assert.match(
      text,
      /^compose stack +1500 s +\d+ s {2}timed out at its limit \(beside the node tests, in "deployment"\)/m,
    );
    assert.match(text, /^lint +3 s +\d+ s {2}timed out at its limit/m);
  });

  it('lists the 15 slowest test files, longest first', () => {
    const files = Array.from(
      { length: 20 },
      (_, i) =>
        `f${i}.test.ts\t${i % 2 ? 'unit' : 'shared'}\t${i}.5\t${i === 19 ? 'exit 1, 2 failed' : 'passed'}`,
    );
    writeFileSync(join(folder, 'test-files.tsv'), `${files.join('\n')}\n`);
    const listed = report(folder, 1)
      .split('== the 15 slowest test files\n')[1]!
      .split('\n')
      .filter((l) => l.includes('.test.ts'));
    assert.equal(listed.length, 15);
    assert.match(listed[0]!, /^ +19\.5 s {2}f19\.test\.ts \(unit\) {2}exit 1, 2 failed$/);
    assert.match(listed[14]!, /f5\.test\.ts \(unit\)$/);
  });

  it('ends with why the failed files and the given logs failed, and says nothing when nothing did', () => {
    const log = join(folder, 'deployment.log');
    const passed = join(folder, 'passed.log');
    writeFileSync(
      join(folder, 'test-failures.txt'),
      '── a.test.ts (exit 1, 1 failed)\n✖ failing tests:\n✖ a',
    );
    const steps = Array.from({ length: 100 }, (_, i) => `step ${i}`).join('\n');
    writeFileSync(log, `${steps}\n✖ failing tests:\n\n✖ pods ready (3 ms)\n  pod restarted\n`);
    writeFileSync(passed, `${steps}\nℹ fail 0\n`);
    const text = report(folder, 1, [log, passed, join(folder, 'missing.log')]);
    const why = text.split('\n== why it failed\n')[1]!;
    assert.match(why, /^── a\.test\.ts \(exit 1, 1 failed\)\n✖ failing tests:\n✖ a\n/);
    assert.match(why, /── deployment\.log\n✖ failing tests:\n✖ pods ready \(3 ms\)\n {2}pod restarted$/);
    assert.doesNotMatch(why, /step \d|passed\.log|missing/);

    rmSync(join(folder, 'test-failures.txt'));
    assert.doesNotMatch(report(folder, 1, [passed]), /why it failed/);
  });

  it('names the files that failed once and passed on their retry, with why, before why anything failed', () => {
    writeFileSync(
      join(folder, 'test-flaky.txt'),
      '── b.test.ts (exit 1, 1 failed, then passed on its retry (flaky))\n✖ failing tests:\n✖ b',
    );
    writeFileSync(
      join(folder, 'test-failures.txt'),
      '── a.test.ts (exit 1, 1 failed)\n✖ failing tests:\n✖ a',
    );
    const text = report(folder, 1);
    const flaky = text.split('\n== failed once, passed on a retry (flaky: fix these)\n')[1]!;
    assert.match(
      flaky,
      /^── b\.test\.ts \(exit 1, 1 failed, then passed on its retry \(flaky\)\)\n✖ failing tests:\n✖ b\n\n== why it failed\n── a\.test\.ts/,
    );
    rmSync(join(folder, 'test-flaky.txt'));
    rmSync(join(folder, 'test-failures.txt'));
    assert.doesNotMatch(report(folder, 1), /flaky/);
  });
});
