/**
 * One step of a service's start-up (a broker connected, a stream subscribed), timed. A process that
 * is not listening yet answers no probe, so while a step is under way past `warnEveryMs` it says
 * which step it waits on, at warn (production's level), every `warnEveryMs`; a step that took that
 * long says so when done. Quick steps log at debug only.
 */
import type { Logger } from 'pino';

/** 10 s: under a probe's first failure on the defaults, far above a healthy broker's connect. */
export const START_UP_STEP_WARN_MS = 10_000;

/** A service's start-up steps, each run by the function returned, logged to `logger`. */
export function startUpSteps(logger: Logger, warnEveryMs = START_UP_STEP_WARN_MS) {
  return async function step<T>(name: string, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const seconds = () => Math.round((performance.now() - started) / 1000);
    const waiting = setInterval(
      () => logger.warn({ step: name }, `start-up: still waiting for ${name} after ${seconds()} s`),
      warnEveryMs,
    );
    waiting.unref();
    try {
      const result = await work();
      const tookMs = performance.now() - started;
      if (tookMs >= warnEveryMs) logger.warn({ step: name, tookMs }, `start-up: ${name} took ${seconds()} s`);
      else logger.debug({ step: name, tookMs }, `start-up: ${name}`);
      return result;
    } finally {
      clearInterval(waiting);
    }
  };
}
