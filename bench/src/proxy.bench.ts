/**
 * Reverse proxy benchmarks (performance-anchors.md §2, §5.2, §6.3 b):
 * - P1: GET forwarded to a bare node:http backend, against B-proxy (a minimal undici forwarder)
 *   and nginx `proxy_pass` (1 worker, upstream keepalive 64); goals ≥ 0.85× and ≥ 0.5×.
 * - P3: added p99 over direct at a fixed 1,000 req/s (open loop, no coordinated omission); ≤ 2 ms.
 * - P4: the same GET on a `secured` endpoint (`Authorization: Bearer`), HS256 and RS256 (a second
 *   proxy with an RSA public key), against the HS256 proxy's open endpoint: one token repeated (a
 *   cache hit; goal ≥ 0.95×), and distinct tokens, each sent once (a pool of many more tokens than
 *   the proxy's 10,000-token cache holds, every wrk run going on where the last one stopped, so every
 *   request is a cache miss and a signature check; goal ≥ 0.8× for HS256). The baseline is the same
 *   proxy process forwarding the same GET, with the same distinct tokens made by the same wrk Lua
 *   code, on an endpoint without auth: the floor is the proxy itself, so the ratio is exactly what
 *   the JWT check costs (a reference row sends the bare GET with no token, as wrk's static request).
 * - P6: POST → CloudEvent published to Kafka → 202: p99 at 1,000 req/s, and publish throughput
 *   (wrk, closed loop) next to P1's; the same event on an endpoint with an Avro `schema` (data
 *   encoded through the schema registry of tools/deps.sh), against JSON publishing; goal ≥ 0.7×.
 *
 * Every server (backend, B-proxy, nginx, proxy) is its own process pinned to cpu0; wrk and the
 * open-loop client run pinned to cpu1 (`-t1 -c50`). After a 3 s warm-up of each, sides are measured
 * interleaved, 5 rounds of 5 s; medians, min–max and ratios of medians are printed. The proxy runs
 * on the memory store (the blacklist check is then an in-process lookup; Redis is P5's subject).
 * Bounded: about 6 minutes. Run: `node bench/src/proxy.bench.ts` (`--no-kafka` skips P6,
 * `--scenarios p1,p3,p4,p6` picks some, `--rounds <k>` sets the rounds, `--cpu-prof` has the proxies
 * write CPU profiles to a temp dir it prints; `BENCH_PORT_BASE` moves the ports, default 3200;
 * `--only-p6` runs P6 alone; the schema registry is at SCHEMA_REGISTRY_PORT, Kafka at KAFKA_BROKERS;
 * `--base <checkout>` adds P4's sides on the two proxies of another checkout, e.g. a worktree of the
 * commit before a change, interleaved with ours: before and after in one run, each against its own
 * no-JWT side).
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SchemaRegistryClient } from '@gatehouse/avro';
import { signJwt } from '@gatehouse/auth';
import { runOpenLoop } from './harness/open-loop.ts';
import {
  boxLine,
  formatRatio,
  median,
  type PinnedProcess,
  ratio,
  runWrk,
  spawnPinned,
  type WrkResult,
} from './harness/index.ts';

const flag = (name: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const rounds = Number(flag('rounds') ?? 5);
const baseCheckout = flag('base') && resolve(flag('base')!);
const scenarios = new Set((flag('scenarios') ?? 'p1,p3,p4,p6').split(','));
const seconds = 5;
const warmupSeconds = 3;
const rate = 1000;
const rateSeconds = 10;
const portBase = Number(process.env['BENCH_PORT_BASE'] ?? 3200);
const ports = {
  backend: portBase,
  undici: portBase + 1,
  nginx: portBase + 2,
  proxy: portBase + 3,
  proxyApi: portBase + 13,
  kafkaProxy: portBase + 4,
  kafkaApi: portBase + 14,
  rsProxy: portBase + 5,
  rsApi: portBase + 15,
  baseProxy: portBase + 6,
  baseApi: portBase + 16,
  baseRsProxy: portBase + 7,
  baseRsApi: portBase + 17,
};
const secret = 'a-benchmark-secret-that-is-32-bytes-or-more';

const schemaRegistryUrl = `http://127.0.0.1:${process.env['SCHEMA_REGISTRY_PORT'] ?? 8081}/apis/ccompat/v7`;
const avroSubject = 'gw-bench-proxy-avro-value';
const profileDir = process.argv.includes('--cpu-prof')
  ? mkdtempSync(join(tmpdir(), 'proxy-bench-prof-'))
  : undefined;
const proxyNodeArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : undefined;
const root = fileURLToPath(new URL('../../', import.meta.url));
const proxyMain = join(root, 'services/proxy/src/main.ts');
const bareServer = fileURLToPath(new URL('./baselines/bare-node-hello.ts', import.meta.url));
const undiciForwarder = fileURLToPath(new URL('./baselines/undici-forwarder.ts', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'proxy-bench-'));
const backendUrl = `http://127.0.0.1:${ports.backend}`;

interface Side {
  name: string;
  url: string;
  script?: string;
  /** Distinct tokens: a script per run that starts where the previous run stopped. */
  tokens?: TokenStream;
  /** P4: the proxy this side's requests go to, whose CPU time is read around each run. */
  server?: PinnedProcess;
  results: WrkResult[];
}

/**
 * A pool of signed tokens in a file, handed to wrk run after run so that no token is sent twice
 * while the proxy could still have it cached: each run starts after the last token the previous one
 * may have sent (its completed requests plus one in flight per connection). Past the end it wraps;
 * the pool is several times the proxy's cache (10,000), so a token comes back only long after its
 * eviction.
 */
class TokenStream {
  private next = 0;
  wraps = 0;
  private readonly file: string;
  readonly size: number;

  constructor(file: string, size: number) {
    this.file = file;
    this.size = size;
  }

  /** Another stream over the same tokens, with a cursor of its own. */
  another(): TokenStream {
    return new TokenStream(this.file, this.size);
  }

  script(): string {
    return luaScript(
      `tokens-${this.next}.lua`,
      `local tokens = {}
for line in io.lines("${this.file}") do tokens[#tokens + 1] = "Bearer " .. line end
local i = ${this.next}
request = function()
  i = i + 1
  if i > #tokens then i = 1 end
  return wrk.format(nil, nil, { ["Authorization"] = tokens[i] })
end
`,
    );
  }

  consumed(requests: number, connections: number): void {
    const end = this.next + requests + connections;
    this.wraps += Math.floor(end / this.size);
    this.next = end % this.size;
  }
}

function tokenStream(name: string, count: number, sign: (i: number) => string): TokenStream {
  const file = join(work, `${name}.txt`);
  const started = performance.now();
  writeFileSync(file, `${Array.from({ length: count }, (_, i) => sign(i)).join('\n')}\n`);
  console.log(`  ${count} ${name} tokens signed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return new TokenStream(file, count);
}

function apis(withKafka: boolean) {
  const proxy = { target_url: '127.0.0.1', port: ports.backend };
  const endpoints: unknown[] = [
    { id: 'hello', method: 'GET', path_regex: '/hello' },
    { id: 'secure', method: 'GET', path_regex: '/secure', secured: true },
  ];
  if (withKafka)
    endpoints.push({
      id: 'publish',
      method: 'POST',
      path_regex: '/publish',
      target: 'kafka',
      topic: 'gw-bench-proxy',
    });
  if (withKafka)
    endpoints.push({
      id: 'publish-avro',
      method: 'POST',
      path_regex: '/publish-avro',
      target: 'kafka',
      topic: 'gw-bench-proxy-avro',
      schema: avroSubject,
    });
  return JSON.stringify([
    { id: 'bench', name: 'bench', auth_type: 'jwt', version_data: { default: { endpoints } }, proxy },
  ]);
}

function proxyEnv(
  port: number,
  apiPort: number,
  withKafka: boolean,
  jwt: { key: string; alg: string } = { key: secret, alg: 'HS256' },
): Record<string, string> {
  return {
    INBOUND_PORT: String(port),
    API_PORT: String(apiPort),
    HOST: '127.0.0.1',
    STORE: 'memory',
    CONTROL_BUS: 'memory',
    LOG_LEVEL: 'warn',
    JWT_SECRET_KEY: jwt.key,
    JWT_ALG: jwt.alg,
    TOKEN_SECRET: randomBytes(32).toString('hex'),
    PROXY_CONFIG_FILE: apis(withKafka),
    PROXY_TARGET_ALLOW: '127.0.0.1',
    ...(withKafka && {
      KAFKA_BROKERS: process.env['KAFKA_BROKERS'] ?? '127.0.0.1:9092',
      KAFKA_SCHEMA_REGISTRY_HOST: schemaRegistryUrl,
    }),
  };
}

/** nginx as a non-daemon child with one worker, pinned to cpu0, config in a temp dir. */
async function startNginx(): Promise<{ stop(): Promise<void> }> {
  const conf = join(work, 'nginx.conf');
  writeFileSync(
    conf,
    `daemon off;
worker_processes 1;
pid ${work}/nginx.pid;
error_log ${work}/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${work}/body;
  proxy_temp_path ${work}/proxy;
  fastcgi_temp_path ${work}/fastcgi;
  uwsgi_temp_path ${work}/uwsgi;
  scgi_temp_path ${work}/scgi;
  upstream backend { server 127.0.0.1:${ports.backend}; keepalive 64; }
  server {
    listen 127.0.0.1:${ports.nginx};
    location / {
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`,
  );
  const child: ChildProcess = spawn('taskset', ['-c', '0', 'nginx', '-p', work, '-c', conf], {
    stdio: 'ignore',
  });
  await waitUntil(
    async () => (await fetch(`http://127.0.0.1:${ports.nginx}/`).catch(() => undefined))?.ok === true,
  );
  return {
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGQUIT');
      await once(child, 'exit');
    },
  };
}

async function waitUntil(probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a server');
    await new Promise((r) => setTimeout(r, 100));
  }
}

function luaScript(name: string, text: string): string {
  const file = join(work, name);
  writeFileSync(file, text);
  return file;
}

const wrkConnections = 50;

async function wrkRun(side: Side, runSeconds: number): Promise<WrkResult> {
  const script = side.tokens?.script() ?? side.script;
  const result = await runWrk({ url: side.url, seconds: runSeconds, script, connections: wrkConnections });
  side.tokens?.consumed(result.requests, wrkConnections);
  return result;
}

type Around = (side: Side, run: () => Promise<WrkResult>) => Promise<WrkResult>;

async function measure(sides: Side[], around: Around = (_side, run) => run()): Promise<void> {
  for (const side of sides) await wrkRun(side, warmupSeconds);
  for (let round = 1; round <= rounds; round++) {
    const line: string[] = [];
    for (const side of sides) {
      const result = await around(side, () => wrkRun(side, seconds));
      // A few wrk time-outs happen when the box is loaded; more than 1 % means something is broken.
      if (result.errors > result.requests / 100)
        throw new Error(
          `${side.name}: ${result.errors} errors in ${result.requests} requests, round ${round}`,
        );
      side.results.push(result);
      const errors = result.errors > 0 ? ` (${result.errors} errors)` : '';
      line.push(`${side.name} ${(result.requestsPerSecond / 1000).toFixed(1)}k${errors}`);
    }
    console.log(`  round ${round}: ${line.join(', ')}`);
  }
}

function summary(side: Side): string {
  const rps = side.results.map((r) => r.requestsPerSecond);
  const p99 = median(side.results.map((r) => r.p99));
  return `${side.name.padEnd(22)} median ${median(rps).toFixed(0).padStart(6)} req/s (min ${Math.min(...rps).toFixed(0)}, max ${Math.max(...rps).toFixed(0)}), p99 ${p99.toFixed(2)} ms`;
}

const rpsOf = (side: Side) => median(side.results.map((r) => r.requestsPerSecond));

async function publishToKafka(processes: PinnedProcess[], ours: Side | undefined): Promise<void> {
  console.log('\nP6: POST → CloudEvent on Kafka → 202');
  await new SchemaRegistryClient({ url: schemaRegistryUrl, cacheTtlMs: 0, timeoutMs: 5000 }).register(
    avroSubject,
    { type: 'record', name: 'Bench', fields: [{ name: 'n', type: 'int' }] },
  );
  const kafkaProxy = await spawnPinned({
    name: 'proxy+kafka',
    script: proxyMain,
    port: ports.kafkaProxy,
    cpu: 0,
    env: proxyEnv(ports.kafkaProxy, ports.kafkaApi, true),
  });
  processes.push(kafkaProxy);
  const body = JSON.stringify({
    specversion: '0.2',
    type: 'bench',
    source: '/bench',
    id: 'e1',
    data: { n: 1 },
  });
  const post = luaScript(
    'post.lua',
    `wrk.method = "POST"\nwrk.body = '${body}'\nwrk.headers["Content-Type"] = "application/json"\n`,
  );
  const publishUrl = `http://127.0.0.1:${ports.kafkaProxy}/publish`;
  const p6: number[] = [];
  for (let round = 1; round <= 3; round++) {
    const r = await runOpenLoop({
      url: publishUrl,
      rate,
      seconds: rateSeconds,
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    if (r.errors > 0) throw new Error(`P6: ${r.errors} errors`);
    p6.push(r.p99);
    console.log(
      `  round ${round} at ${rate} req/s: p50 ${r.p50.toFixed(2)} p99 ${r.p99.toFixed(2)} max ${r.max.toFixed(1)} ms`,
    );
  }
  console.log(`  P6 accept p99 at ${rate} req/s: ${median(p6).toFixed(2)} ms`);
  const publish: Side = { name: 'publish (wrk -c50)', url: publishUrl, script: post, results: [] };
  const avro: Side = { name: 'publish Avro', url: `${publishUrl}-avro`, script: post, results: [] };
  await measure([publish, avro]);
  for (const side of [publish, avro]) console.log(`  ${summary(side)}`);
  if (ours)
    console.log(
      `  P6 publish throughput / P1 forwarding: ${formatRatio(ratio(rpsOf(publish), rpsOf(ours)))} (goal ≥ 0.5×)`,
    );
  console.log(
    `  P6 Avro publish / JSON publish: ${formatRatio(ratio(rpsOf(avro), rpsOf(publish)))} (goal ≥ 0.7×)`,
  );
}

async function main(): Promise<void> {
  const withKafka = !process.argv.includes('--no-kafka');
  console.log(boxLine({ wrk: '4.1.0' }));
  const processes: PinnedProcess[] = [];
  const stopAll: Array<() => Promise<void>> = [];
  try {
    if (process.argv.includes('--only-p6')) return await publishToKafka(processes, undefined);
    const backend = await spawnPinned({
      name: 'backend',
      script: bareServer,
      port: ports.backend,
      cpu: 0,
      env: { PORT: String(ports.backend) },
    });
    processes.push(backend);
    const proxy = await spawnPinned({
      name: 'proxy',
      script: proxyMain,
      port: ports.proxy,
      cpu: 0,
      ...(proxyNodeArgs && { nodeArgs: proxyNodeArgs }),
      env: proxyEnv(ports.proxy, ports.proxyApi, false),
    });
    processes.push(proxy);
    const direct: Side = { name: 'direct', url: `${backendUrl}/hello`, results: [] };
    const ours: Side = { name: 'gatehouse proxy', url: `http://127.0.0.1:${ports.proxy}/hello`, results: [] };

    if (scenarios.has('p1')) {
      processes.push(
        await spawnPinned({
          name: 'B-proxy',
          script: undiciForwarder,
          port: ports.undici,
          cpu: 0,
          env: { PORT: String(ports.undici), TARGET: backendUrl },
        }),
      );
      const nginx = await startNginx();
      stopAll.push(() => nginx.stop());
      console.log('\nP1: GET forwarded to a local backend (wrk -t1 -c50, req/s)');
      const undici: Side = {
        name: 'B-proxy (undici)',
        url: `http://127.0.0.1:${ports.undici}/hello`,
        results: [],
      };
      const nginxSide: Side = {
        name: 'nginx proxy_pass',
        url: `http://127.0.0.1:${ports.nginx}/hello`,
        results: [],
      };
      const cpuBefore = proxy.cpuSeconds();
      await measure([direct, undici, ours, nginxSide]);
      const proxyCpuUs =
        ((proxy.cpuSeconds() - cpuBefore) * 1e6) / ours.results.reduce((n, r) => n + r.requests, 0);
      for (const side of [direct, undici, ours, nginxSide]) console.log(`  ${summary(side)}`);
      console.log(`  proxy CPU per request (incl. warm-up share): ~${proxyCpuUs.toFixed(0)} µs`);
      console.log(`  P1 proxy / B-proxy: ${formatRatio(ratio(rpsOf(ours), rpsOf(undici)))} (goal ≥ 0.85×)`);
      console.log(
        `  P1 proxy / nginx:   ${formatRatio(ratio(rpsOf(ours), rpsOf(nginxSide)))} (goal ≥ 0.50×)`,
      );
    }

    if (scenarios.has('p3')) {
      console.log(`\nP3: added p99 at ${rate} req/s (open loop, ${rateSeconds} s, 3 interleaved rounds)`);
      const directP99: number[] = [];
      const proxyP99: number[] = [];
      for (let round = 1; round <= 3; round++) {
        const d = await runOpenLoop({ url: direct.url, rate, seconds: rateSeconds });
        const p = await runOpenLoop({ url: ours.url, rate, seconds: rateSeconds });
        if (d.errors + p.errors > 0) throw new Error(`P3: ${d.errors + p.errors} errors`);
        directP99.push(d.p99);
        proxyP99.push(p.p99);
        console.log(
          `  round ${round}: direct p50 ${d.p50.toFixed(2)} p99 ${d.p99.toFixed(2)} ms; proxy p50 ${p.p50.toFixed(2)} p99 ${p.p99.toFixed(2)} ms`,
        );
      }
      const added = median(proxyP99) - median(directP99);
      console.log(`  P3 added p99: ${added.toFixed(2)} ms (goal ≤ 2 ms)`);
    }

    if (scenarios.has('p4')) processes.push(...(await benchJwt(proxy, backend)));

    if (withKafka && scenarios.has('p6'))
      await publishToKafka(processes, ours.results.length > 0 ? ours : undefined);
  } finally {
    for (const stop of stopAll) await stop();
    for (const p of processes.reverse()) await p.stop();
    execFileSync('rm', ['-rf', work]);
    if (profileDir) console.log(`CPU profiles of the proxies: ${profileDir}`);
  }
}

/** The P4 sides of one checkout's pair of proxies (HS256 on `hs`, RS256 on `rs`). */
interface JwtSides {
  open: Side;
  hsOne: Side;
  hsMany: Side;
  rsOne: Side;
  rsMany: Side;
}

/** P4: returns the proxies it started, for the caller to stop. */
async function benchJwt(proxy: PinnedProcess, backend: PinnedProcess): Promise<PinnedProcess[]> {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const started: PinnedProcess[] = [];
  const rsProxy = await spawnRsProxy('proxy RS256', proxyMain, ports.rsProxy, ports.rsApi, pem);
  started.push(rsProxy);
  // With --base, the same two proxies of the other checkout, measured interleaved with ours.
  const base = baseCheckout
    ? {
        hs: await spawnPinned({
          name: 'proxy@base',
          script: join(baseCheckout, 'services/proxy/src/main.ts'),
          port: ports.baseProxy,
          cpu: 0,
          ...(proxyNodeArgs && { nodeArgs: proxyNodeArgs }),
          env: proxyEnv(ports.baseProxy, ports.baseApi, false),
        }),
        rs: await spawnRsProxy(
          'proxy RS256@base',
          join(baseCheckout, 'services/proxy/src/main.ts'),
          ports.baseRsProxy,
          ports.baseRsApi,
          pem,
        ),
      }
    : undefined;
  if (base) started.push(base.hs, base.rs);
  console.log('\nP4: JWT (Authorization: Bearer) vs the same proxy without JWT');
  const exp = Math.floor(Date.now() / 1000) + 3600;
  const claims = (i: number) => ({ sub: `u${i}`, jti: `s${i}`, exp });
  const hs = (i: number) => signJwt(claims(i), { alg: 'HS256', key: secret });
  const rs = (i: number) => signJwt(claims(i), { alg: 'RS256', key: rsa.privateKey });
  const hsStream = tokenStream('HS256', Number(flag('hs-tokens') ?? 150_000), hs);
  const rsStream = tokenStream('RS256', Number(flag('rs-tokens') ?? 30_000), rs);
  // Every side makes its requests the same way, in a Lua request() (wrk's static request would
  // be a cheaper client, and a request without the header less for the proxy to read and forward):
  // the sides differ only in what the proxy does with the token.
  const repeated = (name: string, token: string) =>
    luaScript(
      `${name}.lua`,
      `local header = "Bearer ${token}"
request = function()
  return wrk.format(nil, nil, { ["Authorization"] = header })
end
`,
    );
  const hsOneScript = repeated('hs-one', hs(-1));
  const rsOneScript = repeated('rs-one', rs(-1));
  const sidesOf = (hsServer: PinnedProcess, rsServer: PinnedProcess, suffix: string): JwtSides => {
    const side = (
      name: string,
      server: PinnedProcess,
      path: string,
      requests: { script: string } | { tokens: TokenStream },
    ): Side => ({
      name: `${name}${suffix}`,
      url: `http://127.0.0.1:${server.port}${path}`,
      server,
      ...requests,
      results: [],
    });
    // Our sides take the streams' own cursors; another checkout's sides cursors of their own.
    const distinct = (stream: TokenStream) => ({ tokens: suffix === '' ? stream : stream.another() });
    return {
      // The baseline carries distinct HS256 tokens too, to an endpoint that does not check them.
      open: side('no JWT', hsServer, '/hello', { tokens: hsStream.another() }),
      hsOne: side('HS256, one token', hsServer, '/secure', { script: hsOneScript }),
      hsMany: side('HS256, distinct', hsServer, '/secure', distinct(hsStream)),
      rsOne: side('RS256, one token', rsServer, '/secure', { script: rsOneScript }),
      rsMany: side('RS256, distinct', rsServer, '/secure', distinct(rsStream)),
    };
  };
  const ours = sidesOf(proxy, rsProxy, '');
  const before = base ? sidesOf(base.hs, base.rs, '@base') : undefined;
  // Reference: the same open GET as wrk's static request without any token, the baseline before.
  const bare: Side = { name: 'no JWT, no token', url: ours.open.url, server: proxy, results: [] };
  const sides = [...Object.values(ours), ...(before ? Object.values(before) : []), bare];
  // CPU seconds of the proxy (all its threads: WebCrypto runs on libuv's pool) and of the backend.
  const cpu = new Map<Side, { proxy: number; backend: number }>();
  await measure(sides, async (side, run) => {
    const server = side.server!;
    const [proxyBefore, backendBefore] = [server.cpuSeconds(), backend.cpuSeconds()];
    const result = await run();
    const sum = cpu.get(side) ?? { proxy: 0, backend: 0 };
    sum.proxy += server.cpuSeconds() - proxyBefore;
    sum.backend += backend.cpuSeconds() - backendBefore;
    cpu.set(side, sum);
    return result;
  });
  const perRequest = (side: Side, of: 'proxy' | 'backend') =>
    ((cpu.get(side)?.[of] ?? 0) * 1e6) / side.results.reduce((n, r) => n + r.requests, 0);
  for (const side of sides)
    console.log(
      `  ${summary(side)}, CPU µs/request: proxy ${perRequest(side, 'proxy').toFixed(0)}, backend ${perRequest(side, 'backend').toFixed(0)}`,
    );
  for (const stream of [hsStream, rsStream])
    if (stream.wraps > 0)
      console.log(
        `  (${stream.size}-token pool wrapped ${stream.wraps}×: reused only after ${stream.size} others)`,
      );
  // On a busy box the rps of one process swings by 2× with the other load; CPU per request much
  // less. cpu0 runs the proxy and the backend, so once it is saturated the rps ratio is the ratio of
  // their CPU per request together: printed next to the rps ratio, with the proxy's alone.
  const cpu0 = (side: Side) => perRequest(side, 'proxy') + perRequest(side, 'backend');
  const line = (label: string, side: Side, open: Side, goal: string) =>
    console.log(
      `  P4 ${label.padEnd(23)} / no JWT: ${formatRatio(ratio(rpsOf(side), rpsOf(open)))} (${goal}); by cpu0 CPU per request ${formatRatio(ratio(cpu0(open), cpu0(side)))}, proxy's alone ${formatRatio(ratio(perRequest(open, 'proxy'), perRequest(side, 'proxy')))}`,
    );
  for (const [set, suffix] of [[ours, ''], ...(before ? ([[before, '@base']] as const) : [])] as const) {
    line(`HS256 one token${suffix}`, set.hsOne, set.open, 'goal ≥ 0.95×');
    line(`HS256 distinct${suffix}`, set.hsMany, set.open, 'goal ≥ 0.80×');
    line(`RS256 one token${suffix}`, set.rsOne, set.open, 'goal ≥ 0.95×');
    line(`RS256 distinct${suffix}`, set.rsMany, set.open, 'no goal');
  }
  line('bare GET (ref.)', bare, ours.open, 'no token sent, static wrk request');
  return started;
}

/** A proxy whose JWT_SECRET_KEY is the RSA public key `pem`, from the checkout of `script`. */
function spawnRsProxy(
  name: string,
  script: string,
  port: number,
  apiPort: number,
  pem: string,
): Promise<PinnedProcess> {
  return spawnPinned({
    name,
    script,
    port,
    cpu: 0,
    ...(proxyNodeArgs && { nodeArgs: proxyNodeArgs }),
    env: proxyEnv(port, apiPort, false, { key: pem, alg: 'RS256' }),
  });
}

await main();
