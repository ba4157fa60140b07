/**
 * What matching `path_regex` in linear time costs a request: the proxy's matcher (re2js, RE2 syntax:
 * services/proxy/src/definitions/path-regex.ts) side by side with the backtracking JavaScript RegExp it
 * replaced, on the same anchored patterns. Cases: a 20-route table where the request matches the
 * last route and takes two capture groups (19 misses, one hit with groups: the worst realistic
 * first-match scan), one route with groups, and the pattern that made the switch necessary,
 * `/(a+)+x`, on `/` and n a's (RegExp only up to 22 a's: each one more doubles its time; RE2 on 40).
 *
 * Method: the two sides run interleaved, A,B,A,B, each sample a fixed number of matches after a
 * warm-up; medians and min–max of µs per request are printed, and the ratio of medians. Bounded:
 * about 15 s. Run with `node bench/src/path-regex.bench.ts` (`--rounds <k>` samples per side, default 5).
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { compilePathRegex, type PathPattern } from '@gatehouse/proxy';
import { boxLine } from './harness/index.ts';

const roundsArg = process.argv.indexOf('--rounds');
const samples = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 5;
const perSample = 100_000;

type Matcher = (path: string) => unknown;

function linear(source: string): PathPattern {
  const compiled = compilePathRegex(source);
  if (!compiled.ok) throw new Error(compiled.error);
  return compiled.regex;
}

/** The matcher the proxy had: `^(?:…)$` with the `u` flag, first exec that matches. */
const backtracking = (source: string) => new RegExp(`^(?:${source})$`, 'u');

function table(size: number): string[] {
  return Array.from({ length: size }, (_, i) =>
    i === size - 1 ? '/api/v[0-9]+/users/([0-9]+)/items/([a-z-]+)' : `/svc${i}/([^/]+)/x`,
  );
}

function firstMatch<T>(routes: T[], match: (route: T, path: string) => unknown): Matcher {
  return (path) => {
    for (const route of routes) {
      const m = match(route, path);
      if (m !== undefined && m !== null) return m;
    }
    return undefined;
  };
}

function microsPerMatch(matcher: Matcher, path: string): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < perSample; i++) matcher(path);
  return Number(process.hrtime.bigint() - start) / perSample / 1000;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const span = (xs: number[]) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;

function compare(name: string, path: string, ours: Matcher, theirs: Matcher): void {
  microsPerMatch(ours, path);
  microsPerMatch(theirs, path);
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < samples; i++) {
    a.push(microsPerMatch(ours, path));
    b.push(microsPerMatch(theirs, path));
  }
  console.log(
    `${name.padEnd(34)} re2js ${median(a).toFixed(2)} µs (${span(a)})  RegExp ${median(b).toFixed(2)} µs (${span(b)})  ratio ${(median(a) / median(b)).toFixed(1)}`,
  );
}

function catastrophic(): void {
  const ours = linear('/(a+)+x');
  const theirs = backtracking('/(a+)+x');
  for (const n of [16, 20, 22]) {
    const path = `/${'a'.repeat(n)}`;
    const t = performance.now();
    theirs.exec(path);
    console.log(`/(a+)+x on ${n} a's: RegExp ${(performance.now() - t).toFixed(1)} ms`);
  }
  const path = `/${'a'.repeat(40)}`;
  const t = performance.now();
  ours.match(path);
  console.log(
    `/(a+)+x on 40 a's: re2js ${(performance.now() - t).toFixed(2)} ms (RegExp: about 2^18 times its 22 a's)`,
  );
}

console.log(boxLine());
const routes = table(20);
compare(
  '20 routes, last matches, 2 groups',
  '/api/v2/users/12345/items/blue-widget',
  firstMatch(routes.map(linear), (r, p) => r.match(p)),
  firstMatch(routes.map(backtracking), (r, p) => r.exec(p)),
);
compare(
  '1 route, 2 groups',
  '/foo/abc/bar/def',
  firstMatch([linear('/foo/([^/]+)/bar/([^/]+)')], (r, p) => r.match(p)),
  firstMatch([backtracking('/foo/([^/]+)/bar/([^/]+)')], (r, p) => r.exec(p)),
);
compare(
  '1 route, no match',
  '/other/path/entirely',
  firstMatch([linear('/foo/([^/]+)/bar/([^/]+)')], (r, p) => r.match(p)),
  firstMatch([backtracking('/foo/([^/]+)/bar/([^/]+)')], (r, p) => r.exec(p)),
);
catastrophic();
