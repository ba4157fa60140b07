/**
 * The OpenTelemetry Node SDK for one service, started by startTracing (otel-bootstrap.ts), which
 * imports this file only when tracing is on.
 */
import {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  processDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import {
  ATTR_SERVICE_INSTANCE_ID,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
} from '@opentelemetry/semantic-conventions';
import type { TracingOptions } from './otel-bootstrap.ts';
import type { OtlpExporterSettings } from './otlp-exporter-settings.ts';
import { otlpTraceExporter } from './otlp-trace-exporter.ts';

export async function startOtelSdk(
  url: string,
  exporter: OtlpExporterSettings,
  options: TracingOptions,
  env: NodeJS.ProcessEnv,
): Promise<NodeSDK> {
  const sdk = new NodeSDK({
    resource: serviceResource(options, env),
    autoDetectResources: false,
    traceExporter: await otlpTraceExporter(url, exporter),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  return sdk;
}

/** Ours last: OTEL_SERVICE_NAME is the one way to rename a service, the replica id always wins. */
function serviceResource(options: TracingOptions, env: NodeJS.ProcessEnv) {
  const detected = detectResources({ detectors: [hostDetector, processDetector, envDetector] });
  const own: Record<string, string> = {
    [ATTR_SERVICE_NAME]: env['OTEL_SERVICE_NAME']?.trim() || options.serviceName,
  };
  if (options.serviceInstanceId) own[ATTR_SERVICE_INSTANCE_ID] = options.serviceInstanceId;
  if (options.serviceVersion) own[ATTR_SERVICE_VERSION] = options.serviceVersion;
  return defaultResource().merge(detected).merge(resourceFromAttributes(own));
}
