/**
 * `--help` and `-h` for every benchmark entry point and run-all.ts: each imports this module first
 * (`import './harness/help.ts';`), so it runs before any other module of the entry point does. Given
 * --help or -h (before a `--`), it prints the entry point's header comment (what it measures, how to
 * run it, its flags and the environment it reads) and exits 0: nothing built, started, bound or
 * written. Import it only from entry points: it reads the arguments of whatever process runs.
 */
import { readFileSync } from 'node:fs';

/** The first block comment of a file, without its comment marks. */
export function headerComment(file: string): string {
  const comment = /\/\*\*?\n([\s\S]*?)\n\s*\*\//.exec(readFileSync(file, 'utf8'));
  return comment ? comment[1]!.replace(/^ \* ?/gm, '') : '';
}

/** Whether these arguments ask for help: `--help` or `-h` before any `--`. */
export function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

const entry = process.argv[1];
if (entry !== undefined && asksForHelp(process.argv.slice(2))) {
  console.log(headerComment(entry));
  process.exit(0);
}
