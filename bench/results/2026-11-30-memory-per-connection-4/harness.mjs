// Throwaway harness (not in the repo): start a hub, hold N raw SSE connections, read memory at each count.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
const { values } = parseArgs({ options: {
  target: { type: 'string' }, root: { type: 'string' }, counts: { type: 'string', default: '4000,8000' },
  snap: { type: 'string' }, heaptrack: { type: 'boolean' }, port: { type: 'string', default: '23580' }, tag: { type: 'string', default: 'x' },
  fanout: { type: 'string', default: 'memory' },
} });
const port = Number(values.port);
const counts = values.counts.split(',').map(Number);
const run = `mem35h-${process.pid}`;
let script, env, path;
if (values.target === 'bsse') {
  script = `${values.root}/bench/src/baselines/raw-sse-hub.ts`;
  env = { PORT: String(port) };
  path = '/sse';
} else {
  script = `${values.root}/services/push-hub/dist/main.js`;
  env = {
    FANOUT_BUS: values.fanout, FANOUT_TOPIC: `${run}-gw-events`, CONTROL_BUS: 'redis', STORE: 'redis',
    STORE_KEY_PREFIX: `${run}:`, REDIS_URL: 'redis://127.0.0.1:6379', KAFKA_BROKERS: '127.0.0.1:9092',
    NATS_SERVERS: 'nats://127.0.0.1:4222', JWT_SECRET_KEY: 'x'.repeat(40), TOKEN_SECRET: `${run}-token-secret`,
    INBOUND_PORT: String(port), API_PORT: String(port + 10), HOST: '127.0.0.1', LOG_LEVEL: 'warn',
    MAX_CONNECTIONS_PER_MINUTE: '1000000', MAX_CONNECTIONS_PER_IP_PER_MINUTE: '1000000',
    MAX_CONNECTIONS_PER_ADDRESS: '1000000', MAX_CONNECTIONS: '1000000', HEARTBEAT_INTERVAL: '10m',
  };
  path = `/_gw/v1/connection/sse?subscriptions=${encodeURIComponent(JSON.stringify([{ eventType: 'bench' }]))}`;
}
const args = ['--expose-gc', '--import', '/tmp/mem35/probe.mjs', ...(values.target === 'bsse' ? [] : ['--enable-source-maps']), '--max-semi-space-size=8', script];
const child = values.heaptrack ? spawn('heaptrack', ['-o', `/tmp/mem35/ht-${values.target}-${values.tag}`, process.execPath, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }) : spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const killer = setTimeout(() => { child.kill('SIGKILL'); process.exit(2); }, 600_000);
async function ask(m) { child.send(m); const [r] = await once(child, 'message'); return r; }
// wait for port
for (let i = 0; ; i++) {
  if (i > 300) throw new Error('no listen');
  const ok = await new Promise((res) => { const s = connect(port, '127.0.0.1'); s.once('connect', () => { s.destroy(); res(true); }); s.once('error', () => res(false)); });
  if (ok) break;
  await sleep(100);
}
await sleep(1500);
const request = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`;
const sockets = [];
let opened = 0, failed = 0;
function open(i) {
  const s = connect({ host: '127.0.0.1', port, localAddress: `127.0.0.${2 + (i % 200)}` });
  let first = true;
  s.once('connect', () => s.write(request));
  s.on('data', (c) => { if (first) { first = false; if (c.toString('latin1', 9, 12) === '200') opened++; else { failed++; console.error(c.toString().slice(0, 200)); } } });
  s.on('error', () => { failed++; });
  sockets.push(s);
}
const kb = (t, f) => Number(new RegExp(`^${f}:\\s+(\\d+) kB`, 'm').exec(t)?.[1]) * 1024;
import { writeFileSync } from 'node:fs';
let mapDump = 0;
function summary(r) {
  if (process.env.MAPS) writeFileSync(`/tmp/mem35/maps-${values.target}-${values.tag}-${mapDump++}.json`, JSON.stringify(r.maps));
  const sp = Object.fromEntries(r.spaces.map((s) => [s.space_name, s.space_used_size]));
  const phys = Object.fromEntries(r.spaces.map((s) => [s.space_name, s.physical_space_size]));
  const brk = r.maps.filter((m) => m.name === '[heap]').reduce((a, m) => a + m.rss, 0);
  const anonMaps = r.maps.filter((m) => m.name === '');
  const anonBig = anonMaps.filter((m) => m.size >= 60 * 1024 * 1024).reduce((a, m) => a + m.rss, 0);
  const anonAll = anonMaps.reduce((a, m) => a + m.rss, 0);
  const isArena = (m) => BigInt('0x' + m.start) % 0x4000000n === 0n && m.size <= 0x4000000;
  const arenas = anonMaps.filter(isArena).reduce((a, m) => a + m.rss, 0);
  const otherAnon = anonAll - arenas;
  return { brk, anonBig, anonAll, arenas, otherAnon, heapUsed: r.mu.heapUsed, heapTotal: r.mu.heapTotal, external: r.mu.external, arrayBuffers: r.mu.arrayBuffers,
    rss: r.mu.rss, anon: kb(r.smaps, 'Anonymous'), pss: kb(r.smaps, 'Pss'), rssAnon: kb(r.status, 'RssAnon'),
    old: sp.old_space, newSp: sp.new_space, code: sp.code_space, lo: sp.large_object_space, newLo: sp.new_large_object_space,
    oldPhys: phys.old_space, newPhys: phys.new_space, codePhys: phys.code_space, loPhys: phys.large_object_space, heapPhys: r.spaces.reduce((a, s) => a + s.physical_space_size, 0) };
}
if (process.env.TRACE) await ask('trace-on');
const results = [];
results.push({ n: 0, ...summary(await ask('reduce')) });
let n = 0;
for (const target of counts) {
  while (n < target) {
    const b = Math.min(500, target - n);
    for (let k = 0; k < b; k++) open(n + k);
    n += b;
    const t0 = Date.now();
    while (opened + failed < n && Date.now() - t0 < 30_000) await sleep(20);
  }
  if (process.env.RATE) { console.log('settle allocation rate B/ms (first 2 s after connects):', (await ask('rate')).bytesPerMs.toFixed(1)); console.log('then:', (await ask('rate')).bytesPerMs.toFixed(1)); }
  else await sleep(2000);
  const r = summary(await ask('mem'));
  results.push({ n: opened, ...r });
  if (process.env.GDB) { const { execFileSync } = await import('node:child_process'); execFileSync('gdb', ['-p', String(child.pid), '-batch', '-ex', 'call (void)malloc_stats()'], { stdio: ['ignore', 'ignore', 'inherit'] }); await sleep(500); }
  if (values.snap) await ask(`snap:${values.snap}-${values.tag}-${target}.heapsnapshot`);
}
if (process.env.TRACE) { const r = await ask('trace-report'); console.log('small allocUnsafe bytes', r.small, 'calls', r.smallN, 'from(string) chars', r.from); console.log(JSON.stringify(r.stacks, null, 1)); }
console.log(JSON.stringify({ target: values.target, root: values.root, tag: values.tag, failed, results }));
const a = results[1], b = results[results.length - 1], d = b.n - a.n;
const per = (f) => ((b[f] - a[f]) / d).toFixed(0);
console.log(`${values.tag} ${values.target}: per connection ${a.n}->${b.n}: heapUsed ${per('heapUsed')} old ${per('old')} new ${per('newSp')} lo ${per('lo')} external ${per('external')} arrayBuffers ${per('arrayBuffers')} rss ${per('rss')} anon ${per('anon')} rssAnon ${per('rssAnon')}`);
const z = results[0], last = results[results.length - 1];
const avg = (f) => ((last[f] - z[f]) / last.n).toFixed(0);
console.log(`${values.tag} ${values.target}: average over ${last.n} (loaded - idle)/N: rss ${avg('rss')} heapUsed ${avg('heapUsed')} heapPhys ${avg('heapPhys')} oldPhys ${avg('oldPhys')} newPhys ${avg('newPhys')} codePhys ${avg('codePhys')} loPhys ${avg('loPhys')} external ${avg('external')} nonHeapAnon ${(((last.anon - last.heapPhys) - (z.anon - z.heapPhys)) / last.n).toFixed(0)}`);
console.log(`SPLIT ${values.tag} ${values.target} avg: rss ${avg('rss')} heapUsed ${avg('heapUsed')} v8+otherAnon ${avg('otherAnon')} brk ${avg('brk')} arenas ${avg('arenas')} code ${avg('codePhys')} new ${avg('newPhys')} | marginal ${a.n}->${b.n}: rss ${per('rss')} heapUsed ${per('heapUsed')} v8+otherAnon ${per('otherAnon')} brk ${per('brk')} arenas ${per('arenas')}`);
console.log(`${values.tag} ${values.target}: marginal brk ${per('brk')} anonMaps ${per('anonAll')} anonBig(>=60MiB, arenas/cage) ${per('anonBig')}; average brk ${avg('brk')} anonMaps ${avg('anonAll')}`);
console.log(`${values.tag} ${values.target}: marginal heapPhys ${per('heapPhys')} nonHeapAnon ${(((b.anon - b.heapPhys) - (a.anon - a.heapPhys)) / d).toFixed(0)}`);
if (values.heaptrack) { child.send('die'); await sleep(3000); }
for (const s of sockets) s.destroy();
child.kill('SIGTERM');
await once(child, 'exit');
clearTimeout(killer);
if (process.env.TABLE) {
  const M = (x) => (x / 1048576).toFixed(1);
  console.log('n rss anonMaps brk heapUsed heapPhys oldUsed oldPhys newPhys codePhys loPhys');
  for (const r of results) console.log([r.n, M(r.rss), M(r.anonAll), M(r.brk), M(r.heapUsed), M(r.heapPhys), M(r.old), M(r.oldPhys), M(r.newPhys), M(r.codePhys), M(r.loPhys)].join(' '));
}
