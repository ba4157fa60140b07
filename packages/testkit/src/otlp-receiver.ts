/**
 * A local OTLP/HTTP receiver of the JSON encoding (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`, which
 * `receiver.env` sets; the default is protobuf) for tests of code that records spans: start tracing
 * with `endpoint: receiver.url` and `env: receiver.env`, shut it down (which sends what is
 * buffered), then look at `receiver.spans`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: 'internal' | 'server' | 'client' | 'producer' | 'consumer' | 'unspecified';
  /** The instrumentation scope (tracer name), e.g. `@gatehouse/proxy`. */
  scope: string;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
  /** true when the span's status is ERROR. */
  failed: boolean;
}

export interface OtlpReceiver {
  /** Base URL: `startTracing({ endpoint })` or OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  /** The settings that make tracing send what this receiver reads. */
  env: Record<string, string>;
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

const kinds = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'] as const;

interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  links?: Array<{ traceId: string; spanId: string }>;
  status?: { code?: number };
}

interface OtlpExport {
  resourceSpans: Array<{
    resource: { attributes?: OtlpAttribute[] };
    scopeSpans: Array<{ scope?: { name?: string }; spans: OtlpSpan[] }>;
  }>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') spans.push(...received(JSON.parse(Buffer.concat(chunks).toString())));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    env: { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function received(body: OtlpExport): ReceivedSpan[] {
  return body.resourceSpans.flatMap((r) => {
    const resource = attributeRecord(r.resource.attributes);
    return r.scopeSpans.flatMap((scope) =>
      scope.spans.map((s) => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId || undefined,
        name: s.name,
        kind: kinds[s.kind] ?? 'unspecified',
        scope: scope.scope?.name ?? '',
        attributes: attributeRecord(s.attributes),
        resource,
        links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
        failed: s.status?.code === 2,
      })),
    );
  });
}

/** `{stringValue}`, `{intValue}` (a number or a decimal string), `{boolValue}` … as plain values. */
function attributeRecord(attributes: OtlpAttribute[] | undefined): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const { key, value } of attributes ?? []) {
    const [type, v] = Object.entries(value)[0] ?? [];
    record[key] = type === 'intValue' ? Number(v) : v;
  }
  return record;
}
