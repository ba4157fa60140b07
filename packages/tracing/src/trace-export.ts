/**
 * Which exporter spans go out by, and where, from the OpenTelemetry environment variables (the
 * specification's names):
 * - `OTEL_TRACES_EXPORTER`: `otlp` (the default), `zipkin` or `none` (tracing off); one name, any
 *   other value stops start-up naming the variable;
 * - `otlp`: the endpoint option, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`
 *   (see startTracing in otel-bootstrap.ts); none of them set: tracing stays off;
 * - `zipkin`: `OTEL_EXPORTER_ZIPKIN_ENDPOINT`, the full URL of the Zipkin span API
 *   (`http://zipkin:9411/api/v2/spans`), required: the specification's default, localhost, is no
 *   Zipkin in a container.
 * `OTEL_SDK_DISABLED=true` keeps tracing off whatever else is set. A Zipkin endpoint without
 * `OTEL_TRACES_EXPORTER` is refused rather than ignored: it would leave tracing silently off (or on
 * OTLP).
 */
import { otlpProtocol } from './otlp-exporter-settings.ts';

export const traceExporters = ['otlp', 'zipkin', 'none'] as const;
export type TraceExporterName = (typeof traceExporters)[number];

/** Where spans go when tracing is on. */
export interface TraceExport {
  exporter: Exclude<TraceExporterName, 'none'>;
  /** The URL spans are sent to (for `grpc`, the collector's address). */
  url: string;
}

/** The exporter OTEL_TRACES_EXPORTER names (`otlp` when unset); throws naming the variable otherwise. */
export function traceExporterName(env: NodeJS.ProcessEnv): TraceExporterName {
  const text = nonBlank(env['OTEL_TRACES_EXPORTER']);
  if (text === undefined) return 'otlp';
  const name = traceExporters.find((e) => e === text.toLowerCase());
  if (name === undefined)
    throw new Error(`OTEL_TRACES_EXPORTER: must be one of ${traceExporters.join(', ')} (got '${text}')`);
  return name;
}

/**
 * The exporter and URL of these options, or undefined when tracing stays off. `endpoint`: a base URL
 * of an OTLP/HTTP receiver, winning over the OTLP variables (not used by the Zipkin exporter).
 */
export function traceExport(options: { endpoint?: string }, env: NodeJS.ProcessEnv): TraceExport | undefined {
  if (isTrue(env['OTEL_SDK_DISABLED'])) return undefined;
  const exporter = traceExporterName(env);
  if (exporter === 'none') return undefined;
  const zipkin = nonBlank(env['OTEL_EXPORTER_ZIPKIN_ENDPOINT']);
  if (exporter === 'zipkin') {
    if (zipkin === undefined)
      throw new Error(
        'OTEL_TRACES_EXPORTER is zipkin: set OTEL_EXPORTER_ZIPKIN_ENDPOINT to the Zipkin span URL, e.g. http://zipkin:9411/api/v2/spans',
      );
    return { exporter, url: zipkinUrl(zipkin) };
  }
  if (zipkin !== undefined && nonBlank(env['OTEL_TRACES_EXPORTER']) === undefined)
    throw new Error(
      'OTEL_EXPORTER_ZIPKIN_ENDPOINT is set but OTEL_TRACES_EXPORTER is not: set OTEL_TRACES_EXPORTER=zipkin to export to Zipkin (or otlp)',
    );
  const url = otlpUrl(options, env);
  return url === undefined ? undefined : { exporter, url };
}

/** The URL spans would be sent to under these options, or undefined when tracing stays off. */
export function tracesUrl(options: { endpoint?: string }, env: NodeJS.ProcessEnv): string | undefined {
  return traceExport(options, env)?.url;
}

function otlpUrl(options: { endpoint?: string }, env: NodeJS.ProcessEnv): string | undefined {
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

/** An http(s) URL with a path: the bare server (`http://zipkin:9411`) would answer every export 404. */
function zipkinUrl(text: string): string {
  const name = 'OTEL_EXPORTER_ZIPKIN_ENDPOINT';
  if (!/^https?:\/\//i.test(text)) throw new Error(`${name}: must be an http(s) URL (got '${text}')`);
  if (!URL.canParse(text)) throw new Error(`${name}: not a valid URL (got '${text}')`);
  if (new URL(text).pathname === '/')
    throw new Error(
      `${name}: must be the full span URL, e.g. ${text.replace(/\/+$/, '')}/api/v2/spans (got '${text}')`,
    );
  return text;
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
