/**
 * The official OTLP trace exporter for the protocol the settings name (otlp-exporter-settings.ts),
 * with their headers and TLS files. Only the chosen exporter is loaded: the gRPC one brings grpc-js.
 */
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import type { OtlpExporterSettings } from './otlp-exporter-settings.ts';

export async function otlpTraceExporter(url: string, settings: OtlpExporterSettings): Promise<SpanExporter> {
  const { protocol, headers, tls } = settings;
  if (protocol === 'grpc') {
    const { credentials, Metadata } = await import('@grpc/grpc-js');
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-grpc');
    const metadata = new Metadata();
    for (const [name, value] of Object.entries(headers)) metadata.set(name, value);
    const secure = url.startsWith('https:');
    const channel = secure
      ? credentials.createSsl(
          tls.ca === undefined ? null : Buffer.from(tls.ca),
          tls.key === undefined ? null : Buffer.from(tls.key),
          tls.cert === undefined ? null : Buffer.from(tls.cert),
        )
      : credentials.createInsecure();
    return new OTLPTraceExporter({ url, metadata, credentials: channel });
  }
  const config = { url, headers, ...(Object.keys(tls).length > 0 && { httpAgentOptions: { ...tls } }) };
  if (protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter(config);
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter(config);
}
