/**
 * Reverse proxy benchmarks (performance-anchors.md §2, §5.2, §6.3 b):
 * - P1: GET forwarded to a bare node:http backend, against B-proxy (a minimal undici forwarder)
 *   and nginx `proxy_pass` (1 worker, upstream keepalive 64); goals ≥ 0.85× and ≥ 0.5×.
 * - P3: added p99 over direct at a fixed 1,000 req/s (open loop, no coordinated omission); ≤ 2 ms.
 * - P4: the same GET on a `secured` endpoint (HS256 in `Authorization: Bearer`), one token repeated
 *   and 10,000 distinct tokens in rotation, against the same proxy's open endpoint; goal ≥ 0.8×.
 * - P6: POST → CloudEvent published to Kafka → 202: p99 at 1,000 req/s, and publish throughput
 *   (wrk, closed loop) next to P1's; the same event on an endpoint with an Avro `schema` (data
 *   encoded through the schema registry of tools/deps.sh), against JSON publishing; goal ≥ 0.7×.
 *
 * Every server (backend, B-proxy, nginx, proxy) is its own process pinned to cpu0; wrk and the
 * open-loop client run pinned to cpu1 (`-t1 -c50`). After a 3 s warm-up of each, sides are measured
 * interleaved, 5 rounds of 5 s; medians, min–max and ratios of medians are printed. The proxy runs
 * on the memory store (the blacklist check is then an in-process lookup; Redis is P5's subject).
 * Bounded: about 5 minutes. Run: `node bench/src/proxy.bench.ts` (`--no-kafka` skips P6, `--only-p6`
 * runs P6 alone; the schema registry is at SCHEMA_REGISTRY_PORT, Kafka at KAFKA_BROKERS).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { signJwt } from '@gatehouse/auth';
import { SchemaRegistryClient } from '@gatehouse/avro';
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

const rounds = 5;
const seconds = 5;
const warmupSeconds = 3;
const rate = 1000;
const rateSeconds = 10;
const ports = {
  backend: 3200,
  undici: 3201,
  nginx: 3202,
  proxy: 3203,
  proxyApi: 3213,
  kafkaProxy: 3204,
  kafkaApi: 3214,
};
const secret = 'a-benchmark-secret-that-is-32-bytes-or-more';
const schemaRegistryUrl = `http://127.0.0.1:${process.env['SCHEMA_REGISTRY_PORT'] ?? 8081}/apis/ccompat/v7`;
const avroSubject = 'gw-bench-proxy-avro-value';

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
  results: WrkResult[];
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

function proxyEnv(port: number, apiPort: number, withKafka: boolean): Record<string, string> {
  return {
    INBOUND_PORT: String(port),
    API_PORT: String(apiPort),
    HOST: '127.0.0.1',
    STORE: 'memory',
    CONTROL_BUS: 'memory',
    LOG_LEVEL: 'warn',
    JWT_SECRET_KEY: secret,
    TOKEN_SECRET: randomBytes(32).toString('hex'),
    PROXY_CONFIG_FILE: apis(withKafka),
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

async function measure(sides: Side[]): Promise<void> {
  for (const side of sides) await runWrk({ url: side.url, seconds: warmupSeconds, script: side.script });
  for (let round = 1; round <= rounds; round++) {
    const line: string[] = [];
    for (const side of sides) {
      const result = await runWrk({ url: side.url, seconds, script: side.script });
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

/** P6, next to P1's forwarding throughput when it ran (`ours`). */
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
    processes.push(
      await spawnPinned({
        name: 'backend',
        script: bareServer,
        port: ports.backend,
        cpu: 0,
        env: { PORT: String(ports.backend) },
      }),
    );
    processes.push(
      await spawnPinned({
        name: 'B-proxy',
        script: undiciForwarder,
        port: ports.undici,
        cpu: 0,
        env: { PORT: String(ports.undici), TARGET: backendUrl },
      }),
    );
    const proxy = await spawnPinned({
      name: 'proxy',
      script: proxyMain,
      port: ports.proxy,
      cpu: 0,
      env: proxyEnv(ports.proxy, ports.proxyApi, false),
    });
    processes.push(proxy);
    const nginx = await startNginx();
    stopAll.push(() => nginx.stop());

    console.log('\nP1: GET forwarded to a local backend (wrk -t1 -c50, req/s)');
    const direct: Side = { name: 'direct', url: `${backendUrl}/hello`, results: [] };
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
    const ours: Side = { name: 'gatehouse proxy', url: `http://127.0.0.1:${ports.proxy}/hello`, results: [] };
    const cpuBefore = proxy.cpuSeconds();
    await measure([direct, undici, ours, nginxSide]);
    const proxyCpuUs =
      ((proxy.cpuSeconds() - cpuBefore) * 1e6) / ours.results.reduce((n, r) => n + r.requests, 0);
    for (const side of [direct, undici, ours, nginxSide]) console.log(`  ${summary(side)}`);
    console.log(`  proxy CPU per request (incl. warm-up share): ~${proxyCpuUs.toFixed(0)} µs`);
    console.log(`  P1 proxy / B-proxy: ${formatRatio(ratio(rpsOf(ours), rpsOf(undici)))} (goal ≥ 0.85×)`);
    console.log(`  P1 proxy / nginx:   ${formatRatio(ratio(rpsOf(ours), rpsOf(nginxSide)))} (goal ≥ 0.50×)`);

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

    console.log('\nP4: JWT (HS256, Authorization: Bearer) vs the same proxy without JWT');
    const exp = Math.floor(Date.now() / 1000) + 3600;
    const token = signJwt({ sub: 'bench', jti: 'bench-session', exp }, { alg: 'HS256', key: secret });
    const tokens = Array.from({ length: 10_000 }, (_, i) =>
      signJwt({ sub: `u${i}`, jti: `s${i}`, exp }, { alg: 'HS256', key: secret }),
    );
    writeFileSync(join(work, 'tokens.txt'), `${tokens.join('\n')}\n`);
    const repeated = luaScript('repeated.lua', `wrk.headers["Authorization"] = "Bearer ${token}"\n`);
    const distinct = luaScript(
      'distinct.lua',
      `local tokens = {}
for line in io.lines("${join(work, 'tokens.txt')}") do tokens[#tokens + 1] = "Bearer " .. line end
local i = 0
request = function()
  i = i + 1
  if i > #tokens then i = 1 end
  return wrk.format(nil, nil, { ["Authorization"] = tokens[i] })
end
`,
    );
    const open: Side = { name: 'no JWT', url: ours.url, results: [] };
    const same: Side = {
      name: 'JWT, one token',
      url: `http://127.0.0.1:${ports.proxy}/secure`,
      script: repeated,
      results: [],
    };
    const many: Side = {
      name: 'JWT, 10k tokens',
      url: `http://127.0.0.1:${ports.proxy}/secure`,
      script: distinct,
      results: [],
    };
    await measure([open, same, many]);
    for (const side of [open, same, many]) console.log(`  ${summary(side)}`);
    console.log(
      `  P4 repeated token / no JWT: ${formatRatio(ratio(rpsOf(same), rpsOf(open)))} (goal ≥ 0.95×)`,
    );
    console.log(
      `  P4 10k tokens / no JWT:     ${formatRatio(ratio(rpsOf(many), rpsOf(open)))} (goal ≥ 0.80×)`,
    );

    if (withKafka) await publishToKafka(processes, ours);
  } finally {
    for (const stop of stopAll) await stop();
    for (const p of processes.reverse()) await p.stop();
    execFileSync('rm', ['-rf', work]);
  }
}

await main();
