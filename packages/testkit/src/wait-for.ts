/** Polls until `probe` returns a truthy value (which is returned) or the time is up. */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  { timeoutMs = 10_000, intervalMs = 20, what = 'condition' } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Retries `attempt` until it resolves (e.g. a publish while a broker comes back). */
export async function eventually<T>(
  attempt: () => Promise<T>,
  opts: { timeoutMs?: number; what?: string } = {},
) {
  let result: { value: T } | undefined;
  await waitFor(
    async () => {
      result = { value: await attempt() };
      return true;
    },
    { timeoutMs: opts.timeoutMs ?? 30_000, intervalMs: 250, what: opts.what ?? 'attempt to succeed' },
  );
  return result!.value;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * For a test file whose client library may leave a handle open after everything was closed (kafkajs
 * reconnect timers after a broker restart): once every test and hook of the file has run, the
 * process ends within `graceMs` even if that handle would keep it alive. It ends with the exit code
 * the test runner set, so failures stay failures, and no test is cut short (unlike
 * --test-force-exit, which can end a file before later suites have run).
 */
export function exitAfterFileWhenHung(graceMs = 10_000): void {
  setTimeout(() => process.exit(), graceMs).unref();
}
