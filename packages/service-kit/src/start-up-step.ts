/**
 * One step of a service's start-up (a broker connected, a stream subscribed), timed. A process that
 * is not listening yet answers no probe, so while a step is under way past `warnEveryMs` it says
 * which step it waits on, at warn (production's level), every `warnEveryMs`; a step that took that
 * long says so when done. Quick steps log at debug only.
 */
import type { Logger } from 'pino';

/** 10 s: under a probe's first failure on the defaults, far above a healthy broker's connect. */
export const START_UP_STEP_WARN_MS = 10_000;

export async function startUpStep<T>(
  logger: Logger,
  step: string,
  work: () => Promise<T>,
  warnEveryMs = START_UP_STEP_WARN_MS,
): Promise<T> {
  const started = performance.now();
  const seconds = () => Math.round((performance.now() - started) / 1000);
  const waiting = setInterval(
    () => logger.warn({ step }, `start-up: still waiting for ${step} after ${seconds()} s`),
    warnEveryMs,
  );
  waiting.unref();
  try {
    const result = await work();
    const tookMs = performance.now() - started;
    if (tookMs >= warnEveryMs) logger.warn({ step, tookMs }, `start-up: ${step} took ${seconds()} s`);
    else logger.debug({ step, tookMs }, `start-up: ${step}`);
    return result;
  } finally {
    clearInterval(waiting);
  }
}
