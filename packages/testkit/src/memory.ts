/**
 * Memory readings for the tests that hold memory flat under an attack: the garbage collector is
 * run first (twice: weak references and finalizers free more on the second pass), so what is left
 * is what the process holds on to.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

export interface MemoryReading {
  /** JavaScript heap in use (strings, objects). */
  heap: number;
  /** Buffers and other memory outside the heap. */
  external: number;
  rss: number;
}

/** Memory still in use after a full collection. */
export async function settledMemory(): Promise<MemoryReading> {
  for (let i = 0; i < 2; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const { heapUsed, external, rss } = process.memoryUsage();
  return { heap: heapUsed, external, rss };
}

export const MiB = 1024 * 1024;

/** `bytes` as MiB with one decimal, for messages. */
export function mib(bytes: number): string {
  return `${(bytes / MiB).toFixed(1)} MiB`;
}
