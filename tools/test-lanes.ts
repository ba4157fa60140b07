/**
 * Which lane of the suite a test file runs in (tools/run-tests.ts), and which files it may run
 * beside, read from what the file and the helpers beside it use:
 * - `alone`: it stops, restarts or pauses a shared broker (testkit's `dependency` and
 *   `pauseDependency`), or says `// test-lane: alone (why)` (a whole-keyspace scan, a process
 *   stopped against a client's timers): no file that uses a broker it disrupts runs beside it;
 * - `shared`: it uses the shared brokers, starts processes or is end-to-end (test-e2e/): it runs
 *   beside other files, each with its own topics, keys and ports from the system;
 * - `unit`: none of that; it runs beside anything, and `make check` runs only these. The runner
 *   points a unit file's broker addresses at a closed port, so a file read wrongly here fails
 *   instead of reaching a broker.
 *
 * Which brokers a file disrupts: those its `dependency(…)` and `pauseDependency(…)` calls name
 * (a name that is not a literal: every broker the file mentions); a declared one disrupts all.
 * Which it uses: every broker its text mentions by name (a word in a comment only adds a
 * conflict, never hides one); an end-to-end file uses all (its services start with the brokers of
 * its harness). So a Kinesis restart runs beside the files that never name Kinesis, and a Kafka
 * restart beside a Redis one.
 *
 * Helpers are the relative imports that stay in a test folder (a test's own modules), followed
 * transitively; the code under test (../src/…) is not a signal.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';

export type Lane = 'unit' | 'shared' | 'alone';

/** The shared brokers tools/deps.sh runs, by family (a TLS or cluster variant is its family's). */
const brokers = {
  kafka: /kafka/i,
  redis: /redis/i,
  nats: /\bnats|NatsBus/i,
  kinesis: /kinesis/i,
  traces: /trace|jaeger|otlp/i,
  zipkin: /zipkin/i,
  'schema-registry': /registry|avro/i,
} as const;
export type Broker = keyof typeof brokers;
const allBrokers = new Set(Object.keys(brokers) as Broker[]);

export interface LaneReading {
  lane: Lane;
  /** What put it there, for the runner's listing. */
  why: string;
  /** The brokers it stops, restarts or pauses. */
  disrupts: ReadonlySet<Broker>;
  /** The brokers it uses (always including those it disrupts). */
  uses: ReadonlySet<Broker>;
}

const declaredAlone = /^\s*\/\/ test-lane: alone\b/m;
const brokerControl = /\b(?:dependency\(\s*['"](?:up|down|restart)['"]\s*,|pauseDependency\()\s*([^,)]+)/g;
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

/** The family a broker name belongs to (`redis-tls-cluster` is Redis), or none. */
function familyOf(name: string): Broker | undefined {
  return (Object.keys(brokers) as Broker[]).find((b) => name === b || name.startsWith(`${b}-`));
}

/** The brokers the calls of `dependency` and `pauseDependency` name; `undefined` when one is not a literal. */
function disruptedByCalls(text: string): Set<Broker> | undefined {
  const named = new Set<Broker>();
  for (const m of text.matchAll(brokerControl)) {
    const literal = /^\s*['"]([\w-]+)['"]\s*$/.exec(m[1]!);
    const family = literal ? familyOf(literal[1]!) : undefined;
    if (!family) return undefined;
    named.add(family);
  }
  return named;
}

export function laneOf(file: string): LaneReading {
  const texts = sources(file);
  const any = (pattern: RegExp) => texts.some((t) => pattern.test(t));
  const endToEnd = file.split(/[\\/]/).includes('test-e2e');
  const mentioned = new Set((Object.keys(brokers) as Broker[]).filter((b) => any(brokers[b])));
  // gatewayEnv's services reach Kafka, Redis and NATS whatever the file names; a file that reaches
  // the brokers without naming one is counted as using them all.
  const unnamed = mentioned.size === 0 && any(brokerUse);
  const uses = endToEnd || unnamed || any(/\bgatewayEnv\b/) ? allBrokers : mentioned;
  const none = new Set<Broker>();
  if (any(declaredAlone))
    return { lane: 'alone', why: 'declared alone', disrupts: allBrokers, uses: allBrokers };
  const calls = texts.map(disruptedByCalls);
  if (calls.some((c) => c === undefined || c.size > 0)) {
    const disrupts = calls.includes(undefined) ? uses : new Set(calls.flatMap((c) => [...c!]));
    const named = [...disrupts].join(', ');
    return {
      lane: 'alone',
      why: `stops or pauses ${named}`,
      disrupts,
      uses: new Set([...uses, ...disrupts]),
    };
  }
  if (endToEnd) return { lane: 'shared', why: 'end-to-end', disrupts: none, uses };
  if (any(brokerUse)) return { lane: 'shared', why: `uses ${[...uses].join(', ')}`, disrupts: none, uses };
  if (any(processUse)) return { lane: 'shared', why: 'starts processes', disrupts: none, uses };
  return { lane: 'unit', why: 'no broker, no process', disrupts: none, uses: none };
}

const meets = (a: ReadonlySet<Broker>, b: ReadonlySet<Broker>) => [...a].some((x) => b.has(x));

/** Whether two files may not run at the same time: one disrupts a broker the other uses. */
export function conflicts(a: LaneReading, b: LaneReading): boolean {
  if (a.lane === 'unit' || b.lane === 'unit') return false;
  return meets(a.disrupts, b.uses) || meets(b.disrupts, a.uses);
}
