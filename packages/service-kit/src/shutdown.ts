/**
 * Graceful shutdown on SIGTERM / SIGINT: runs `stop` once, then exits. A second signal, or a stop
 * that takes longer than `forceAfterMs`, exits at once so a stuck drain never hangs a rollout.
 */
import type { Logger } from './logger.ts';

export function onShutdownSignal(
  stop: () => Promise<void>,
  logger: Logger,
  forceAfterMs = 30_000,
  /** The step under way, named when the stop is cut short. */
  stepUnderWay: () => string | undefined = () => undefined,
): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      const step = stepUnderWay();
      logger.error({ step }, `shutdown took too long${step ? ` (under way: ${step})` : ''}: exiting`);
      process.exit(1);
    }, forceAfterMs).unref();
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
