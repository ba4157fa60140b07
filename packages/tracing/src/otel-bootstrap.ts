/**
 * Starting the OpenTelemetry Node SDK for a service, only when an exporter is configured. Without
 * one tracing stays off and costs nothing: the OpenTelemetry API stays a no-op, isTracingActive()
 * stays false (services skip their span work on it) and the returned handle's shutdown does
 * nothing.
 *
 * The exporter (trace-export.ts): OTEL_TRACES_EXPORTER `otlp` (the default) or `zipkin`.
 * OTLP: where spans go, first match wins:
 * 1. `endpoint` option (a base URL; `/v1/traces` is appended),
 * 2. `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL, used as it is),
 * 3. `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL; `/v1/traces` is appended).
 * Spans go out in batches by the official OTLP exporter of OTEL_EXPORTER_OTLP_PROTOCOL
 * (`http/protobuf` by default, `http/json`, `grpc`), with OTEL_EXPORTER_OTLP_HEADERS and the TLS
 * files of otlp-exporter-settings.ts. For `grpc` the endpoint is the collector's address
 * (`http://collector:4317`; `https://` for TLS), nothing appended.
 * Zipkin: the official Zipkin exporter posts the batches as Zipkin v2 JSON to
 * OTEL_EXPORTER_ZIPKIN_ENDPOINT (the full URL, `http://zipkin:9411/api/v2/spans`).
 * `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` keep tracing off whatever is configured,
 * so an operator can always switch it off. `OTEL_SERVICE_NAME` overrides the service name given in
 * code. Metrics and logs are not exported from here.
 *
 * The resource: `service.name`, `service.instance.id` (the replica id the service also puts in its
 * tokens, so a span leads to the replica that holds a connection) and `service.version`, over what
 * OTEL_RESOURCE_ATTRIBUTES, the host and the process say. The SDK's own detector would draw a random
 * instance id, so the detectors are chosen here. Sampling (OTEL_TRACES_SAMPLER, default: follow the
 * parent, sample new traces) and batching (OTEL_BSP_*) are the SDK's, read from the environment.
 */
import { context, logs, propagation, trace } from '@opentelemetry/api';
import { otlpExporterSettings } from './otlp-exporter-settings.ts';
import type { ServiceIdentity } from './service-identity.ts';
import { type TraceExport, traceExport } from './trace-export.ts';

export interface TracingOptions extends ServiceIdentity {
  /** Base URL of an OTLP/HTTP receiver, e.g. `http://otel-collector:4318` (for the `otlp` exporter). */
  endpoint?: string;
  /** Where the OTEL_* variables are read from; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
}

export interface TracingHandle {
  readonly enabled: boolean;
  /** The exporter spans go out by, when enabled. */
  readonly exporter: TraceExport['exporter'] | undefined;
  /** The URL spans are posted to, when enabled. */
  readonly tracesUrl: string | undefined;
  /** Exports the spans still buffered, then stops; safe to call more than once. */
  shutdown(): Promise<void>;
}

const disabledHandle: TracingHandle = {
  enabled: false,
  exporter: undefined,
  tracesUrl: undefined,
  shutdown: async () => {},
};

let active = false;

/**
 * True while an SDK started here records spans. Code on a hot path checks it before any span work
 * (parsing a carried context, starting a span, setting attributes), so tracing that is off costs a
 * boolean test per request or event.
 */
export function isTracingActive(): boolean {
  return active;
}

/**
 * The SDK (exporter, resources, NodeSDK: 12–17 MiB resident, measured) is imported only here, when
 * tracing is on, so a process without an exporter configured never loads it.
 */
export async function startTracing(options: TracingOptions): Promise<TracingHandle> {
  const env = options.env ?? process.env;
  const target = traceExport(options, env);
  if (target === undefined) return disabledHandle;
  const settings =
    target.exporter === 'otlp'
      ? { exporter: target.exporter, url: target.url, otlp: otlpExporterSettings(env) }
      : { exporter: target.exporter, url: target.url };
  const { startOtelSdk } = await import('./otel-sdk.ts');
  const sdk = await startOtelSdk(settings, options, env);
  active = true;
  let stopping: Promise<void> | undefined;
  return {
    enabled: true,
    exporter: target.exporter,
    tracesUrl: target.url,
    shutdown: () => {
      stopping ??= (async () => {
        active = false;
        try {
          await sdk.shutdown();
        } finally {
          resetGlobalApi();
        }
      })();
      return stopping;
    },
  };
}

/**
 * Puts the OpenTelemetry API back to its no-op state, so nothing records after shutdown and a later
 * start in the same process (tests, a restarted embedded service) can register again.
 */
function resetGlobalApi(): void {
  trace.disable();
  context.disable();
  propagation.disable();
  logs.disable();
}
