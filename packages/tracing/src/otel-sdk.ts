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
import type { ServiceIdentity } from './service-identity.ts';
import { type TraceExporterSettings, traceExporter } from './trace-exporter.ts';

export async function startOtelSdk(
  exporter: TraceExporterSettings,
  service: ServiceIdentity,
  env: NodeJS.ProcessEnv,
): Promise<NodeSDK> {
  const sdk = new NodeSDK({
    resource: serviceResource(service, env),
    autoDetectResources: false,
    traceExporter: await traceExporter(exporter),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  return sdk;
}

/** Ours last: OTEL_SERVICE_NAME is the one way to rename a service, the replica id always wins. */
function serviceResource(service: ServiceIdentity, env: NodeJS.ProcessEnv) {
  const detected = detectResources({ detectors: [hostDetector, processDetector, envDetector] });
  const own: Record<string, string> = {
    [ATTR_SERVICE_NAME]: env['OTEL_SERVICE_NAME']?.trim() || service.serviceName,
  };
  if (service.serviceInstanceId) own[ATTR_SERVICE_INSTANCE_ID] = service.serviceInstanceId;
  if (service.serviceVersion) own[ATTR_SERVICE_VERSION] = service.serviceVersion;
  return defaultResource().merge(detected).merge(resourceFromAttributes(own));
}
