/**
 * Which lane of the suite a test file runs in (tools/run-tests.ts), read from what the file and the
 * helpers beside it use:
 * - `alone`: it stops, restarts or pauses a shared broker (testkit's `dependency` and
 *   `pauseDependency`), or says `// test-lane: alone (why)` (fixed ports, a speed ratio measured
 *   against a peer): no file that uses a broker runs beside it;
 * - `shared`: it uses the shared brokers, starts processes or is end-to-end (test-e2e/): it runs
 *   beside other files, each with its own topics, keys and ports from the system;
 * - `unit`: none of that; it runs beside anything, and `make check` runs only these. The runner
 *   points a unit file's broker addresses at a closed port, so a file read wrongly here fails
 *   instead of reaching a broker.
 * Helpers are the relative imports that stay in a test folder (a test's own modules), followed
 * transitively; the code under test (../src/…) is not a signal.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';

export type Lane = 'unit' | 'shared' | 'alone';

export interface LaneReading {
  lane: Lane;
  /** What put it there, for the runner's listing. */
  why: string;
}

const declaredAlone = /^\s*\/\/ test-lane: alone\b/m;
const brokerControl = /\b(dependency|pauseDependency)\(/;
const brokerUse =
  /\b(dependencyAddress|tlsDependencyAddress|redisDeployments|redisOverTlsSettings|natsOverTlsSettings|kafkaOverSaslSettings|kafkaOverMtlsSettings|gatewayEnv|fetchTrace|waitForTrace)\b/;
const processUse = /\bspawnService\b|['"]node:child_process['"]|\bchromium\b|\bpodman\b/;
const root = resolve(import.meta.dirname, '..');
const relativeImport = /\bfrom\s+['"](\.{1,2}\/[^'"]+\.ts)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+\.ts)['"]/g;

/** The file's text and that of every test-folder helper it imports, transitively. */
function sources(file: string): string[] {
  const seen = new Set<string>();
  const texts: string[] = [];
  const visit = (path: string) => {
    // A path in a test's own text that only looks like an import names no file.
    if (seen.has(path) || !existsSync(path)) return;
    seen.add(path);
    const text = readFileSync(path, 'utf8');
    texts.push(text);
    for (const m of text.matchAll(relativeImport)) {
      const target = resolve(dirname(path), (m[1] ?? m[2])!);
      if (`${sep}${relative(root, target)}`.includes(`${sep}test${sep}`)) visit(target);
    }
  };
  visit(resolve(file));
  return texts;
}

export function laneOf(file: string): LaneReading {
  const texts = sources(file);
  const any = (pattern: RegExp) => texts.some((t) => pattern.test(t));
  if (any(declaredAlone)) return { lane: 'alone', why: 'declared alone' };
  if (any(brokerControl)) return { lane: 'alone', why: 'stops or pauses a broker' };
  if (file.split(/[\\/]/).includes('test-e2e')) return { lane: 'shared', why: 'end-to-end' };
  if (any(brokerUse)) return { lane: 'shared', why: 'uses the brokers' };
  if (any(processUse)) return { lane: 'shared', why: 'starts processes' };
  return { lane: 'unit', why: 'no broker, no process' };
}

/** Can a file of `lane` start while files of the `running` lanes run? */
export function canStartBeside(lane: Lane, running: Iterable<Lane>): boolean {
  if (lane === 'unit') return true;
  for (const other of running) {
    if (other === 'alone') return false;
    if (lane === 'alone' && other === 'shared') return false;
  }
  return true;
}
