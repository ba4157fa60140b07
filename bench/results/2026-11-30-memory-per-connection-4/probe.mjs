// Throwaway probe (not in the repo): IPC 'mem' -> 3 GCs + memoryUsage + smaps_rollup + heap spaces; 'snap:<path>' -> heap snapshot.
import { readFileSync } from 'node:fs';
import v8 from 'node:v8';
if (process.send) {
  process.on('message', (m) => {
    if (m === 'mem' || m === 'reduce') {
      if (m === 'reduce') globalThis.gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      for (let i = 0; i < 3; i++) globalThis.gc();
      const smaps = readFileSync('/proc/self/smaps_rollup', 'utf8');
      const full = readFileSync('/proc/self/smaps', 'utf8').split('\n');
      const maps = []; let cur;
      for (const line of full) {
        const h = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
        if (h) { cur = { start: h[1], size: parseInt(h[2], 16) - parseInt(h[1], 16), name: h[3], rss: 0 }; maps.push(cur); continue; }
        const r = /^Rss:\s+(\d+) kB/.exec(line);
        if (r && cur) cur.rss = Number(r[1]) * 1024;
      }
      const status = readFileSync('/proc/self/status', 'utf8');
      process.send({ maps, mu: process.memoryUsage(), smaps, status, spaces: v8.getHeapSpaceStatistics() });
    } else if (m === 'trace-on') {
      globalThis.__bufStacks = new Map();
      const record = (kind, size) => {
        const stack = new Error().stack.split('\n').slice(2, 9).map((l) => l.trim()).join(' < ');
        const k = `${kind} ${size >= 4096 ? '>=4096' : size} ${stack}`;
        globalThis.__bufStacks.set(k, (globalThis.__bufStacks.get(k) ?? 0) + 1);
      };
      const origFrom = Buffer.from;
      Buffer.from = function (a, ...rest) {
        if (typeof a === 'string') { globalThis.__from = (globalThis.__from ?? 0) + a.length; if (Math.random() < 0.02) record('from-string', a.length); }
        return origFrom.call(this, a, ...rest);
      };
      for (const name of ['allocUnsafeSlow', 'allocUnsafe', 'alloc', 'concat']) {
        const orig = Buffer[name];
        Buffer[name] = function (a, ...rest) {
          const size = name === 'concat' ? (rest[0] ?? a.reduce((t, b) => t + b.length, 0)) : a;
          if (name !== 'allocUnsafe' || size >= 4096) record(name, size);
          else { globalThis.__small = (globalThis.__small ?? 0) + size; globalThis.__smallN = (globalThis.__smallN ?? 0) + 1; if (Math.random() < 0.02) record('allocUnsafe-small', size); }
          return orig.call(this, a, ...rest);
        };
      }
      process.send({ ok: true });
    } else if (m === 'trace-report') {
      process.send({ small: globalThis.__small, smallN: globalThis.__smallN, from: globalThis.__from, stacks: [...globalThis.__bufStacks].sort((a, b) => b[1] - a[1]).slice(0, 15) });
    } else if (m === 'rate') {
      let last = process.memoryUsage().heapUsed, sum = 0, n = 0;
      const t0 = Date.now();
      const iv = setInterval(() => {
        const now = process.memoryUsage().heapUsed;
        if (now > last) sum += now - last;
        last = now;
        if (++n === 40) { clearInterval(iv); process.send({ bytesPerMs: sum / (Date.now() - t0) }); }
      }, 50);
    } else if (m === 'die') {
      for (let i = 0; i < 3; i++) globalThis.gc();
      process.kill(process.pid, 'SIGKILL');
    } else if (typeof m === 'string' && m.startsWith('snap:')) {
      globalThis.gc();
      const path = v8.writeHeapSnapshot(m.slice(5));
      process.send({ path });
    }
  });
  process.channel?.unref();
}
