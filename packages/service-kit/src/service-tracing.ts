/**
 * Starting tracing for a service process (startTracing from @gatehouse/tracing), with an unusable
 * OTEL_* setting (an unknown OTEL_TRACES_EXPORTER, a bad OTLP or Zipkin endpoint …) reported as a
 * configuration error like any other (exit status 2), and a log line saying which exporter spans go
 * out by and where, when tracing is on.
 */
import { startTracing, type TracingHandle, type TracingOptions } from '@gatehouse/tracing';
import { ConfigError } from './env-config.ts';
import type { Logger } from './logger.ts';

export async function startServiceTracing(options: TracingOptions, logger: Logger): Promise<TracingHandle> {
  let tracing: TracingHandle;
  try {
    tracing = await startTracing(options);
  } catch (err) {
    throw new ConfigError([(err as Error).message]);
  }
  if (tracing.enabled)
    logger.info(
      { exporter: tracing.exporter, url: tracing.tracesUrl, instance: options.serviceInstanceId },
      'exporting traces',
    );
  return tracing;
}
