/**
 * Hands back the memory a service needed to start and no longer does. Loading a service's modules
 * (about 900 for a push hub) grows V8's young generation to its maximum (a push hub's
 * `--max-semi-space-size=8`: 16 MiB committed and resident, 2–3 MiB of it in use once idle) and
 * leaves start-up garbage in the old generation; V8 gives neither back until memory runs short, so
 * an idle replica would keep them for its life. One memory-reducing GC once start-up is over (full,
 * compacting, young generation back to its minimum) releases about 20 MiB of an idle push hub's
 * 106 MiB for about 90 ms of CPU, once. The young generation grows again under load, up to the
 * same maximum, so delivery runs as before.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Gc = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/** After listening: lets the broker clients' connects and first checks finish their allocations. */
const settleMs = 1000;

/** One memory-reducing GC, now. */
export function collectStartUpGarbage(): void {
  // V8 offers this GC to JavaScript only through its gc extension, which a context gets when
  // --expose-gc is set as the context is made: one context is made with it, and the flag is unset
  // at once so that no later context (a vm sandbox) finds a gc function.
  setFlagsFromString('--expose-gc');
  let gc: Gc;
  try {
    gc = runInNewContext('gc') as Gc;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

/** Runs collectStartUpGarbage once start-up has settled; never keeps the process alive. */
export function releaseStartUpMemory(): void {
  setTimeout(collectStartUpGarbage, settleMs).unref();
}
