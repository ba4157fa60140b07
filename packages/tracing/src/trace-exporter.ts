/**
 * The official span exporter of the chosen backend (trace-export.ts): OTLP (otlp-trace-exporter.ts)
 * or Zipkin (@opentelemetry/exporter-zipkin, Zipkin v2 JSON over HTTP). Only the chosen one is loaded.
 */
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import type { OtlpExporterSettings } from './otlp-exporter-settings.ts';
import { otlpTraceExporter } from './otlp-trace-exporter.ts';

export type TraceExporterSettings =
  | { exporter: 'otlp'; url: string; otlp: OtlpExporterSettings }
  | { exporter: 'zipkin'; url: string };

export async function traceExporter(settings: TraceExporterSettings): Promise<SpanExporter> {
  if (settings.exporter === 'otlp') return otlpTraceExporter(settings.url, settings.otlp);
  // The URL is always given: the exporter would otherwise read OTEL_EXPORTER_ZIPKIN_ENDPOINT from
  // process.env, not from the environment tracing was started with. The service name comes from
  // each span's resource (service.name).
  const { ZipkinExporter } = await import('@opentelemetry/exporter-zipkin');
  return new ZipkinExporter({ url: settings.url });
}
