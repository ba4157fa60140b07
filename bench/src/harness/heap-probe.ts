/**
 * Preloaded into a benchmarked server (`--expose-gc --import heap-probe.ts`): on the IPC message
 * `heap` it runs a full GC and answers with process.memoryUsage(); on `heap-reduce` it runs V8's
 * memory-reducing "last resort" GC instead, which also shrinks the young generation to its minimum
 * (a plain GC leaves it as large as the last allocation burst grew it, up to 128 MiB). The channel is
 * unref'd so it never keeps the server alive.
 */
type GcOptions = { type: 'major'; execution: 'sync'; flavor: 'regular' | 'last-resort' };
const gc = (globalThis as { gc?: (options?: GcOptions) => void }).gc;

if (process.send) {
  process.on('message', (message) => {
    if (message === 'heap') {
      gc?.();
      gc?.();
    } else if (message === 'heap-reduce') {
      gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    } else return;
    process.send!(process.memoryUsage());
  });
  process.channel?.unref();
}
