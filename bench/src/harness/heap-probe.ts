/**
 * Preloaded into a benchmarked server (`--expose-gc --import heap-probe.ts`): on the IPC message
 * `heap` it runs a full GC and answers with process.memoryUsage(). The channel is unref'd so it
 * never keeps the server alive.
 */
const gc = (globalThis as { gc?: () => void }).gc;

if (process.send) {
  process.on('message', (message) => {
    if (message !== 'heap') return;
    gc?.();
    gc?.();
    process.send!(process.memoryUsage());
  });
  process.channel?.unref();
}
