/**
 * JWT verification throughput: @gatehouse/auth's JwtVerifier (node:crypto, pre-imported KeyObjects,
 * verified-token cache) side by side with jose 6 (`jwtVerify`, WebCrypto, pre-imported CryptoKeys),
 * for HS256 and RS256, with distinct tokens (our cache off, so every call does the full work) and
 * with one token repeated (our cache on).
 *
 * Method (performance-anchors.md §6.1): the two run interleaved A,B,A,B in one process, each sample a
 * fixed time of back-to-back batches of 64 concurrent verifies; medians and the ratio of medians are
 * reported. Bounded: about 30 s in all. Run with `node bench/src/jwt-verify.bench.ts`.
 */
import { generateKeyPairSync, webcrypto } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { JwtVerifier, publicKeyFromPem, StaticKeySource, secretKey, signJwt } from '@gatehouse/auth';
import { importSPKI, jwtVerify } from 'jose';

const samples = 5;
const sampleMs = 500;
const warmupMs = 300;
const batch = 64;

type Verify = (token: string) => Promise<unknown>;

interface Case {
  name: string;
  tokens: string[];
  ours: Verify;
  jose: Verify;
}

async function main(): Promise<void> {
  const secret = 'a-benchmark-secret-that-is-32-bytes-or-more';
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const exp = Math.floor(Date.now() / 1000) + 3600;
  const claims = (i: number) => ({ sub: `user-${i}`, jti: `session-${i}`, username: `user${i}`, exp });
  const hsTokens = Array.from({ length: 10_000 }, (_, i) =>
    signJwt(claims(i), { alg: 'HS256', key: secret }),
  );
  const rsTokens = Array.from({ length: 1_000 }, (_, i) =>
    signJwt(claims(i), { alg: 'RS256', key: rsa.privateKey }),
  );

  const hsKey = new StaticKeySource(secretKey(secret));
  const rsKey = new StaticKeySource(publicKeyFromPem(pem));
  const ours = (keys: StaticKeySource, alg: 'HS256' | 'RS256', cacheSize: number): Verify => {
    const verifier = new JwtVerifier({ keys: [keys], algorithms: [alg], cacheSize });
    return (token) => verifier.verify(token);
  };
  const joseHsKey = await webcrypto.subtle.importKey(
    'raw',
    Buffer.from(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['verify'],
  );
  const joseRsKey = await importSPKI(pem, 'RS256');
  const jose = (key: Parameters<typeof jwtVerify>[1], alg: string): Verify => {
    return (token) => jwtVerify(token, key as webcrypto.CryptoKey, { algorithms: [alg] });
  };

  const cases: Case[] = [
    {
      name: 'HS256 distinct',
      tokens: hsTokens,
      ours: ours(hsKey, 'HS256', 0),
      jose: jose(joseHsKey, 'HS256'),
    },
    {
      name: 'HS256 repeated',
      tokens: [hsTokens[0]!],
      ours: ours(hsKey, 'HS256', 10_000),
      jose: jose(joseHsKey, 'HS256'),
    },
    {
      name: 'RS256 distinct',
      tokens: rsTokens,
      ours: ours(rsKey, 'RS256', 0),
      jose: jose(joseRsKey, 'RS256'),
    },
    {
      name: 'RS256 repeated',
      tokens: [rsTokens[0]!],
      ours: ours(rsKey, 'RS256', 10_000),
      jose: jose(joseRsKey, 'RS256'),
    },
  ];

  console.log(boxLine());
  console.log(
    `each: ${samples} interleaved samples of ${sampleMs} ms, batches of ${batch} concurrent verifies\n`,
  );
  console.log(row('case', 'ours verifies/s', 'jose verifies/s', 'ours/jose', 'ours µs/op'));
  for (const c of cases) {
    await measure(c.ours, c.tokens, warmupMs);
    await measure(c.jose, c.tokens, warmupMs);
    const oursRates: number[] = [];
    const joseRates: number[] = [];
    for (let i = 0; i < samples; i++) {
      oursRates.push(await measure(c.ours, c.tokens, sampleMs));
      joseRates.push(await measure(c.jose, c.tokens, sampleMs));
    }
    const a = median(oursRates);
    const b = median(joseRates);
    console.log(
      row(c.name, fmt(a, oursRates), fmt(b, joseRates), `${(a / b).toFixed(1)}×`, (1e6 / a).toFixed(2)),
    );
  }
}

/** Verifies per second over `ms`, cycling through the tokens. */
async function measure(verify: Verify, tokens: string[], ms: number): Promise<number> {
  let done = 0;
  let next = 0;
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
  return done / ((performance.now() - start) / 1000);
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
  const widths = [16, 26, 26, 10, 10];
  return cells.map((c, i) => c.padEnd(widths[i]!)).join(' ');
}

function boxLine(): string {
  const jose = JSON.parse(
    readFileSync(new URL('../node_modules/jose/package.json', import.meta.url), 'utf8'),
  );
  return `box: ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} vCPU, Node ${process.version}, jose ${jose.version}`;
}

await main();
