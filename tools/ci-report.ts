/**
 * The table .ci/run prints at the end: each stage's time against its budget, the whole run's, and
 * the 15 slowest test files. A stage over its budget by half is named in a warning (not a failure:
 * the run's exit code stays the stages'). Reads what tools/timed.sh (stages.tsv) and
 * tools/run-tests.ts (test-files.tsv) wrote into the report folder.
 *
 * The budgets are those of a machine that has run CI before (its build cache filled,
 * tools/build-cache.sh): 25 minutes in all. A fresh machine builds Kubernetes, Jaeger and the chart
 * tools on top (45 minutes in all): the stages that wait for those builds show it.
 *
 * The deployment stages run beside the node tests (tools/beside.sh): their rows say so, and their
 * times overlap the node tests' (the total is the run's own clock, not a sum).
 *
 * Then the test files that failed once and passed when run again, with why they failed: they do
 * not fail the run, and are named so they get fixed. Last, why what failed failed (tools/failure-excerpt.ts): the test runner's test-failures.txt, and
 * the failing tests of each further log given (the deployment stages' logs), since the end of a CI
 * log is often all that is kept of it.
 *
 * Usage: node tools/ci-report.ts <report folder> <total seconds> [log…]
 */
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { failureExcerpt, hasFailingTests } from './failure-excerpt.ts';
import { headerUsage } from './header-usage.ts';

/** Seconds per stage, by the name tools/timed.sh gives it in the Makefile's `test`. */
export const stageBudgets: Record<string, number> = {
  install: 30,
  lint: 20,
  typecheck: 40,
  'chart checks': 30,
  'compose check': 20,
  'API fuzzing (internal API, public edge)': 150,
  dependencies: 60,
  // These two run beside the node tests at a lower CPU priority (tools/beside.sh): they only have
  // to end before the node tests do, and take longer than they would alone.
  'compose stack': 400,
  'helm release in a local cluster': 500,
  'node tests': 1100,
};
export const warmTotalBudget = 25 * 60;
export const freshTotalBudget = 45 * 60;

const readOr = (path: string, otherwise: string) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return otherwise;
  }
};

function rows(path: string): string[][] {
  try {
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => line.split('\t'));
  } catch {
    return [];
  }
}

const pad = (text: string, width: number) => text.padEnd(width);
const seconds = (n: number) => `${n} s`.padStart(7);

/** The test files that failed, then passed when run again (tools/run-tests.ts --retries), with why. */
function flaky(folder: string): string[] {
  const text = readOr(join(folder, 'test-flaky.txt'), '').trim();
  return text === '' ? [] : ['', '== failed once, passed on a retry (flaky: fix these)', text];
}

/** tools/timed.sh's exit code: 124 is a stage its --limit ended. */
function stageOutcome(status: string): string {
  if (status === '0') return 'ok';
  if (status === '124') return 'timed out at its limit';
  return `failed (exit ${status})`;
}

/** Why the failed test files and the given logs' failing tests failed; empty when nothing did. */
function failures(folder: string, logs: string[]): string[] {
  const parts = [readOr(join(folder, 'test-failures.txt'), '').trim()].filter((p) => p !== '');
  for (const log of logs) {
    const text = readOr(log, '');
    if (hasFailingTests(text)) parts.push(`── ${basename(log)}\n${failureExcerpt(text)}`);
  }
  return parts.length > 0 ? ['', '== why it failed', ...parts] : [];
}

export function report(folder: string, totalSeconds: number, logs: string[] = []): string {
  const lines: string[] = [];
  const warnings: string[] = [];
  const stages = rows(join(folder, 'stages.tsv'));
  const width = Math.max(5, ...stages.map(([name]) => name!.length));
  lines.push('== CI stages (budget: a machine that ran CI before)');
  lines.push(`${pad('stage', width)}     time  budget  outcome`);
  for (const [name, took, status, beside] of stages) {
    const budget = stageBudgets[name!];
    const over = budget !== undefined && Number(took) > budget * 1.5;
    if (over)
      warnings.push(`⚠ stage "${name}" took ${took} s, over its budget of ${budget} s by more than half`);
    const outcome = `${stageOutcome(status!)}${beside ? ` (beside the node tests, in "${beside}")` : ''}`;
    lines.push(
      `${pad(name!, width)}  ${seconds(Number(took))} ${budget ? seconds(budget) : '      -'}  ${outcome}${over ? '  ⚠ over budget' : ''}`,
    );
  }
  lines.push(
    `${pad('total', width)}  ${seconds(totalSeconds)} ${seconds(warmTotalBudget)}  (a fresh machine: ${freshTotalBudget} s)`,
  );
  if (totalSeconds > freshTotalBudget * 1.5)
    warnings.push(`⚠ the run took ${totalSeconds} s, over even a fresh machine's budget by more than half`);
  const files = rows(join(folder, 'test-files.tsv')).sort((a, b) => Number(b[2]) - Number(a[2]));
  if (files.length > 0) {
    lines.push('', '== the 15 slowest test files');
    for (const [file, lane, took, outcome] of files.slice(0, 15))
      lines.push(
        `${`${took} s`.padStart(8)}  ${file} (${lane})${outcome === 'passed' ? '' : `  ${outcome}`}`,
      );
  }
  return [
    ...lines,
    ...(warnings.length > 0 ? ['', ...warnings] : []),
    ...flaky(folder),
    ...failures(folder, logs),
  ].join('\n');
}

if (import.meta.main) {
  const [folder, total, ...logs] = process.argv.slice(2);
  if (folder === '--help' || folder === '-h') {
    console.log(headerUsage(import.meta.url));
    process.exit(0);
  }
  if (!folder) {
    console.log('usage: node tools/ci-report.ts <report folder> <total seconds>');
    process.exit(2);
  }
  console.log(report(folder, Number(total ?? 0), logs));
}
