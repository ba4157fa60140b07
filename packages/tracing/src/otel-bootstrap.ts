/**
 * Starting the OpenTelemetry Node SDK for a service, only when an OTLP endpoint is configured.
 * Without one tracing stays off and costs nothing: the OpenTelemetry API stays a no-op,
 * isTracingActive() stays false (services skip their span work on it) and the returned handle's
 * shutdown does nothing.
 *
 * Where spans go, first match wins:
 * 1. `endpoint` option (a base URL; `/v1/traces` is appended),
 * 2. `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL, used as it is),
 * 3. `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL; `/v1/traces` is appended).
 * `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` keep tracing off whatever is configured,
 * so an operator can always switch it off. `OTEL_SERVICE_NAME` overrides the service name given in
 * code. Spans go out in batches by the official OTLP exporter of OTEL_EXPORTER_OTLP_PROTOCOL
 * (`http/protobuf` by default, `http/json`, `grpc`), with OTEL_EXPORTER_OTLP_HEADERS and the TLS
 * files of otlp-exporter-settings.ts; metrics and logs are not exported from here. For `grpc` the
 * endpoint is the collector's address (`http://collector:4317`; `https://` for TLS), nothing appended.
 *
 * The resource: `service.name`, `service.instance.id` (the replica id the service also puts in its
 * tokens, so a span leads to the replica that holds a connection) and `service.version`, over what
 * OTEL_RESOURCE_ATTRIBUTES, the host and the process say. The SDK's own detector would draw a random
 * instance id, so the detectors are chosen here. Sampling (OTEL_TRACES_SAMPLER, default: follow the
 * parent, sample new traces) and batching (OTEL_BSP_*) are the SDK's, read from the environment.
 */
import { context, logs, propagation, trace } from '@opentelemetry/api';
import { otlpExporterSettings, otlpProtocol } from './otlp-exporter-settings.ts';
import type { ServiceIdentity } from './service-identity.ts';

export interface TracingOptions extends ServiceIdentity {
  /** Base URL of an OTLP/HTTP receiver, e.g. `http://otel-collector:4318`. */
  endpoint?: string;
  /** Where the OTEL_* variables are read from; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
}

export interface TracingHandle {
  readonly enabled: boolean;
  /** The URL spans are posted to, when enabled. */
  readonly tracesUrl: string | undefined;
  /** Exports the spans still buffered, then stops; safe to call more than once. */
  shutdown(): Promise<void>;
}

const disabledHandle: TracingHandle = { enabled: false, tracesUrl: undefined, shutdown: async () => {} };

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
 * tracing is on, so a process without an OTLP endpoint never loads it.
 */
export async function startTracing(options: TracingOptions): Promise<TracingHandle> {
  const env = options.env ?? process.env;
  const url = tracesUrl(options, env);
  if (url === undefined) return disabledHandle;
  const exporter = otlpExporterSettings(env);
  const { startOtelSdk } = await import('./otel-sdk.ts');
  const sdk = await startOtelSdk(url, exporter, options, env);
  active = true;
  let stopping: Promise<void> | undefined;
  return {
    enabled: true,
    tracesUrl: url,
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

/** The URL spans would be posted to under these options, or undefined when tracing stays off. */
export function tracesUrl(
  options: Pick<TracingOptions, 'endpoint'>,
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (isTrue(env['OTEL_SDK_DISABLED']) || env['OTEL_TRACES_EXPORTER']?.trim().toLowerCase() === 'none') {
    return undefined;
  }
  // A gRPC collector is reached at its address: the path is the service's, not the URL's.
  const base = otlpProtocol(env) === 'grpc' ? nonBlank : withTracesPath;
  const url =
    base(options.endpoint) ??
    nonBlank(env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) ??
    base(env['OTEL_EXPORTER_OTLP_ENDPOINT']);
  if (url !== undefined && !/^https?:\/\//i.test(url)) {
    throw new Error(`OTLP traces endpoint must be an http(s) URL, got '${url}'`);
  }
  if (url !== undefined && !URL.canParse(url))
    throw new Error(`OTLP traces endpoint is not a valid URL: '${url}'`);
  return url;
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

function withTracesPath(base: string | undefined): string | undefined {
  const text = nonBlank(base);
  return text === undefined ? undefined : `${text.replace(/\/+$/, '')}/v1/traces`;
}

function nonBlank(text: string | undefined): string | undefined {
  const trimmed = text?.trim();
  return trimmed ? trimmed : undefined;
}

function isTrue(text: string | undefined): boolean {
  return text?.trim().toLowerCase() === 'true';
}
