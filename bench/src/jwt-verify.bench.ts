/**
 * JWT verification throughput: @gatehouse/auth's JwtVerifier (a synchronous signature check with
 * node:crypto through fast-jwt under our allow-list, header and claim checks, verified-token cache)
 * side by side with the floor a competent engineer would write with fast-jwt alone, for HS256 and
 * RS256, like with like:
 * - "miss": a stream of distinct tokens, four times as many as the cache holds, cycled, so every
 *   verify misses (each token comes back only after three cache-fulls of others): both sides with
 *   the same cache (size 1,000), so the miss path includes the cache insert and eviction;
 * - "no cache": the same tokens, both sides without a cache;
 * - "hit": one token repeated, both sides with the same cache.
 *
 * The baseline (B-fast-jwt) is fast-jwt's `createVerifier({ key, algorithms: [alg] })` (its own
 * expiry checks on, its cache off), behind the same ExpiringCache our verifier uses when the case has
 * a cache. It is the fair floor: the library's documented fast path with nothing of ours on it, so the
 * ratio is what our checks and cache cost. Reference rows show where a miss's time went before
 * (issue 25): jose 6's `jwtVerify` with a pre-imported CryptoKey (WebCrypto, what Gatehouse used)
 * next to fast-jwt, and fast-jwt next to a bare node:crypto HMAC (createHmac + timingSafeEqual, no
 * JSON, a reference only).
 *
 * Method (performance-anchors.md §6.1): the process pins itself and every thread (libuv's pool runs
 * WebCrypto's jobs) to cpu0 with `taskset -a`, like the servers of the other benchmarks; sides run
 * interleaved A,B,A,B in it, each sample a fixed time of back-to-back batches of 64 concurrent
 * verifies; medians, min–max and the ratio of medians are printed, of the rate and of the process's
 * CPU time per verify (steadier than the rate on a shared box). Bounded: about 70 s in all.
 * Run with `node bench/src/jwt-verify.bench.ts` (`--rounds <k>` samples per side, default 5;
 * `--base <checkout>` adds rows of our verifier against another checkout's, e.g. a worktree of the
 * commit before a change, miss/no cache/hit for HS256 and RS256: before and after in one process).
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { createHmac, generateKeyPairSync, timingSafeEqual, webcrypto } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  entryBytes,
  ExpiringCache,
  JwtVerifier,
  publicKeyFromPem,
  StaticKeySource,
  secretKey,
  signJwt,
} from '@gatehouse/auth';
import { createVerifier } from 'fast-jwt';
import { importSPKI, type JWTPayload, jwtVerify } from 'jose';
import { boxLine, pinProcess } from './harness/index.ts';

const roundsArg = process.argv.indexOf('--rounds');
const samples = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 5;
const baseArg = process.argv.indexOf('--base');
const baseCheckout = baseArg > 0 ? resolve(process.argv[baseArg + 1] ?? '') : undefined;
const sampleMs = 500;
const warmupMs = 300;
const batch = 64;
const cacheSize = 1_000;
const poolSize = 4 * cacheSize;

type Verify = (token: string) => Promise<unknown>;

/** What the bench takes from @gatehouse/auth: this checkout's, or another's with `--base`. */
interface AuthModule {
  JwtVerifier: typeof JwtVerifier;
  StaticKeySource: typeof StaticKeySource;
  secretKey: typeof secretKey;
  publicKeyFromPem: typeof publicKeyFromPem;
}

interface Case {
  name: string;
  tokens: string[];
  ours: { name: string; verify: Verify; verifier?: JwtVerifier };
  base: { name: string; verify: Verify };
}

/** B-fast-jwt: fast-jwt's verifier made once for the key, behind our cache when `cached`. */
function fastJwtFloor(key: string, alg: 'HS256' | 'RS256', cached: boolean): Verify {
  const verifySync = createVerifier({ key, algorithms: [alg] });
  const verify = async (token: string) => verifySync(token) as JWTPayload;
  return cached ? behindCache(verify) : verify;
}

/** The reference row: jose 6's jwtVerify with a pre-imported CryptoKey (WebCrypto), no cache. */
function joseVerify(key: webcrypto.CryptoKey, alg: string): Verify {
  return async (token: string) => (await jwtVerify(token, key, { algorithms: [alg] })).payload;
}

function behindCache(verify: (token: string) => Promise<JWTPayload>): Verify {
  const cache = new ExpiringCache<string, JWTPayload>(cacheSize, {
    maxBytes: 32 * 1024 * 1024,
    weigh: entryBytes,
  });
  return async (token) => {
    const hit = cache.get(token, Date.now());
    if (hit !== undefined) return hit;
    const payload = await verify(token);
    const now = Date.now();
    cache.set(token, payload, Math.min((payload.exp ?? Number.POSITIVE_INFINITY) * 1000, now + 300_000), now);
    return payload;
  };
}

/** The reference row: HMAC-SHA256 checked synchronously with node:crypto, nothing else. */
function nodeHmac(secret: string): Verify {
  return async (token) => {
    const dot = token.lastIndexOf('.');
    const mac = createHmac('sha256', secret).update(token.slice(0, dot)).digest();
    const signature = Buffer.from(token.slice(dot + 1), 'base64url');
    if (mac.length !== signature.length || !timingSafeEqual(mac, signature)) throw new Error('invalid');
    return JSON.parse(Buffer.from(token.slice(token.indexOf('.') + 1, dot), 'base64url').toString());
  };
}

async function main(): Promise<void> {
  const pinned = pin();
  const secret = 'a-benchmark-secret-that-is-32-bytes-or-more';
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const exp = Math.floor(Date.now() / 1000) + 3600;
  const claims = (i: number) => ({ sub: `user-${i}`, jti: `session-${i}`, username: `user${i}`, exp });
  const hsTokens = Array.from({ length: poolSize }, (_, i) =>
    signJwt(claims(i), { alg: 'HS256', key: secret }),
  );
  const rsTokens = Array.from({ length: poolSize }, (_, i) =>
    signJwt(claims(i), { alg: 'RS256', key: rsa.privateKey }),
  );
  const hsJoseKey = await webcrypto.subtle.importKey(
    'raw',
    Buffer.from(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['verify'],
  );
  const rsJoseKey = await importSPKI(pem, 'RS256');
  const oursFrom = (auth: AuthModule, name: string) => (alg: 'HS256' | 'RS256', size: number) => {
    const key = alg === 'HS256' ? auth.secretKey(secret) : auth.publicKeyFromPem(pem);
    const verifier = new auth.JwtVerifier({
      keys: [new auth.StaticKeySource(key)],
      algorithms: [alg],
      cacheSize: size,
    });
    return { name, verify: (token: string) => verifier.verify(token), verifier };
  };
  const ours = oursFrom({ JwtVerifier, StaticKeySource, secretKey, publicKeyFromPem }, 'ours');
  const base = (alg: 'HS256' | 'RS256', cached: boolean) => ({
    name: 'B-fast-jwt',
    verify: fastJwtFloor(alg === 'HS256' ? secret : pem, alg, cached),
  });

  const cases: Case[] = [];
  for (const [alg, tokens] of [
    ['HS256', hsTokens],
    ['RS256', rsTokens],
  ] as const) {
    cases.push(
      { name: `${alg} miss`, tokens, ours: ours(alg, cacheSize), base: base(alg, true) },
      { name: `${alg} no cache`, tokens, ours: ours(alg, 0), base: base(alg, false) },
      { name: `${alg} hit`, tokens: [tokens[0]!], ours: ours(alg, cacheSize), base: base(alg, true) },
    );
  }
  if (baseCheckout) {
    const ofBase = oursFrom(
      await import(pathToFileURL(join(baseCheckout, 'packages/auth/src/index.ts')).href),
      '@base',
    );
    for (const [alg, tokens] of [
      ['HS256', hsTokens],
      ['RS256', rsTokens],
    ] as const)
      cases.push(
        { name: `${alg} miss`, tokens, ours: ours(alg, cacheSize), base: ofBase(alg, cacheSize) },
        { name: `${alg} no cache`, tokens, ours: ours(alg, 0), base: ofBase(alg, 0) },
        {
          name: `${alg} hit`,
          tokens: [tokens[0]!],
          ours: ours(alg, cacheSize),
          base: ofBase(alg, cacheSize),
        },
      );
  }
  cases.push(
    {
      name: 'HS256 jose (was)',
      tokens: hsTokens,
      ours: { name: 'B-jose', verify: joseVerify(hsJoseKey, 'HS256') },
      base: base('HS256', false),
    },
    {
      name: 'RS256 jose (was)',
      tokens: rsTokens,
      ours: { name: 'B-jose', verify: joseVerify(rsJoseKey, 'RS256') },
      base: base('RS256', false),
    },
    {
      name: 'HS256 reference',
      tokens: hsTokens,
      ours: base('HS256', false),
      base: { name: 'node:crypto HMAC', verify: nodeHmac(secret) },
    },
  );

  console.log(`${boxLine()}, jose ${joseVersion()}; ${pinned}`);
  console.log(
    `each: ${samples} interleaved samples of ${sampleMs} ms, batches of ${batch} concurrent verifies; cache ${cacheSize}, ${poolSize} distinct tokens\n`,
  );
  console.log(
    row(
      'case',
      'A',
      'A verifies/s',
      'B',
      'B verifies/s',
      'A/B',
      'A CPU µs',
      'B CPU µs',
      'A/B by CPU',
      'A hits/misses',
    ),
  );
  for (const c of cases) {
    await measure(c.ours.verify, c.tokens, warmupMs);
    await measure(c.base.verify, c.tokens, warmupMs);
    const before = c.ours.verifier?.stats();
    const a: Sample[] = [];
    const b: Sample[] = [];
    for (let i = 0; i < samples; i++) {
      a.push(await measure(c.ours.verify, c.tokens, sampleMs));
      b.push(await measure(c.base.verify, c.tokens, sampleMs));
    }
    const after = c.ours.verifier?.stats();
    const counts =
      before && after
        ? `${after.cacheHits - before.cacheHits}/${after.cacheMisses - before.cacheMisses}`
        : '–';
    const [ra, rb] = [a.map((x) => x.rate), b.map((x) => x.rate)];
    const [ma, mb] = [median(ra), median(rb)];
    const [ca, cb] = [median(a.map((x) => x.cpuUs)), median(b.map((x) => x.cpuUs))];
    console.log(
      row(
        c.name,
        c.ours.name,
        fmt(ma, ra),
        c.base.name,
        fmt(mb, rb),
        `${(ma / mb).toFixed(2)}×`,
        ca.toFixed(2),
        cb.toFixed(2),
        `${(cb / ca).toFixed(2)}×`,
        counts,
      ),
    );
  }
}

/** Where each side is in its token cycle: a sample goes on from there, so no token comes back early. */
const cursors = new Map<Verify, number>();

interface Sample {
  /** Verifies per second. */
  rate: number;
  /** CPU time of the whole process (WebCrypto's pool threads included) per verify, in µs. */
  cpuUs: number;
}

/**
 * Verifies per second over `ms`, cycling through the tokens, and the CPU time per verify: on a
 * shared box the rate swings with other load, the CPU time much less.
 */
async function measure(verify: Verify, tokens: string[], ms: number): Promise<Sample> {
  let done = 0;
  const cpuBefore = process.cpuUsage();
  let next = cursors.get(verify) ?? 0;
  const start = performance.now();
  const deadline = start + ms;
  while (performance.now() < deadline) {
    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < batch; i++) {
      pending.push(verify(tokens[next]!));
      next = next + 1 === tokens.length ? 0 : next + 1;
    }
    await Promise.all(pending);
    done += batch;
  }
  cursors.set(verify, next);
  const cpu = process.cpuUsage(cpuBefore);
  return { rate: done / ((performance.now() - start) / 1000), cpuUs: (cpu.user + cpu.system) / done };
}

/** Pins this process (every thread, and so the threads it starts later) to cpu0. */
function pin(): string {
  try {
    pinProcess(process.pid, 0);
    return 'pinned to cpu0 (taskset -a)';
  } catch {
    return 'not pinned (no taskset)';
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function fmt(med: number, all: number[]): string {
  const k = (n: number) => `${(n / 1000).toFixed(1)}k`;
  return `${k(med)} (${k(Math.min(...all))}–${k(Math.max(...all))})`;
}

function row(...cells: string[]): string {
  const widths = [16, 7, 24, 17, 24, 7, 9, 9, 11, 12];
  return cells.map((c, i) => c.padEnd(widths[i]!)).join(' ');
}

function joseVersion(): string {
  return JSON.parse(readFileSync(new URL('../node_modules/jose/package.json', import.meta.url), 'utf8'))
    .version;
}

await main();
