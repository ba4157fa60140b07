/**
 * Reading a trace back from the trace backends tools/deps.sh starts (Jaeger v2, its query API
 * `GET /api/traces/<trace id>`; Zipkin, `GET /api/v2/trace/<trace id>`), as a flat list of spans
 * with their parent, kind, service and attributes, so a test checks what the services really
 * exported.
 */
import { dependencyAddress } from './dependencies.ts';
import { waitFor } from './wait-for.ts';

export interface ExportedSpan {
  traceId: string;
  spanId: string;
  /** The span this one is a child of; undefined for a root span. */
  parentSpanId: string | undefined;
  /** Spans of this or other traces this one links to. */
  links: Array<{ traceId: string; spanId: string }>;
  name: string;
  /** server, client, producer, consumer or internal. */
  kind: string;
  service: string;
  /** The process's resource attributes: service.instance.id, service.version … */
  resource: Record<string, unknown>;
  attributes: Record<string, unknown>;
  /** Microseconds since the epoch. */
  startTime: number;
}

interface JaegerTag {
  key: string;
  value: unknown;
}

interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: Array<{ refType: string; traceID: string; spanID: string }> | null;
  tags: JaegerTag[] | null;
  processID: string;
  startTime: number;
}

interface JaegerTrace {
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string; tags: JaegerTag[] | null }>;
}

/**
 * The spans the backend holds for the trace so far; none when it knows no such trace. `queryUrl`:
 * another backend's query API (traces-tls).
 */
export async function fetchTrace(
  traceId: string,
  queryUrl = dependencyAddress.tracesQueryUrl,
): Promise<ExportedSpan[]> {
  const res = await fetch(`${queryUrl}/api/traces/${traceId}`);
  if (res.status === 404) return [];
  if (!res.ok) throw new Error(`trace backend answered ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { data: JaegerTrace[] | null };
  return (body.data ?? []).flatMap((t) => t.spans.map((s) => exportedSpan(s, t)));
}

interface ZipkinSpan {
  traceId: string;
  id: string;
  parentId?: string;
  name?: string;
  kind?: string;
  timestamp?: number;
  localEndpoint?: { serviceName?: string };
  tags?: Record<string, string>;
}

/**
 * The spans the Zipkin server holds for the trace so far; none when it knows no such trace. Zipkin
 * keeps span and service names in lower case, has no links, and its tags hold the resource's
 * attributes beside the span's (the exporter merges them), so `resource` and `attributes` are both
 * the tags.
 */
export async function fetchZipkinTrace(
  traceId: string,
  zipkinUrl = dependencyAddress.zipkinUrl,
): Promise<ExportedSpan[]> {
  const res = await fetch(`${zipkinUrl}/api/v2/trace/${traceId}`);
  if (res.status === 404) return [];
  if (!res.ok) throw new Error(`zipkin answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as ZipkinSpan[]).map((span) => ({
    traceId: span.traceId,
    spanId: span.id,
    parentSpanId: span.parentId,
    links: [],
    name: span.name ?? '',
    kind: span.kind?.toLowerCase() ?? 'internal',
    service: span.localEndpoint?.serviceName ?? '',
    resource: { ...span.tags },
    attributes: { ...span.tags },
    startTime: span.timestamp ?? 0,
  }));
}

/** Polls until `complete` holds for the trace's spans (spans arrive in batches from several processes). */
export async function waitForTrace(
  traceId: string,
  complete: (spans: ExportedSpan[]) => boolean,
  timeoutMs = 20_000,
): Promise<ExportedSpan[]> {
  let spans: ExportedSpan[] = [];
  try {
    await waitFor(
      async () => {
        spans = await fetchTrace(traceId);
        return complete(spans);
      },
      { timeoutMs, intervalMs: 200 },
    );
  } catch (err) {
    throw new Error(`trace ${traceId} incomplete: ${(err as Error).message}\n${describeTrace(spans)}`);
  }
  return spans;
}

/** The trace as an indented tree, `service: kind name`, for failure messages and reports. */
export function describeTrace(spans: ExportedSpan[]): string {
  const ids = new Set(spans.map((s) => s.spanId));
  const lines: string[] = [];
  const visit = (span: ExportedSpan, depth: number) => {
    lines.push(`${'  '.repeat(depth)}${span.service}: ${span.kind} ${span.name} (${span.spanId})`);
    const children = spans.filter((s) => s.parentSpanId === span.spanId);
    for (const child of children.sort((a, b) => a.startTime - b.startTime)) visit(child, depth + 1);
  };
  const roots = spans.filter((s) => s.parentSpanId === undefined || !ids.has(s.parentSpanId));
  for (const root of roots.sort((a, b) => a.startTime - b.startTime)) {
    if (root.parentSpanId !== undefined) lines.push(`caller ${root.parentSpanId} (not in the trace)`);
    visit(root, root.parentSpanId === undefined ? 0 : 1);
  }
  return lines.join('\n');
}

function exportedSpan(span: JaegerSpan, trace: JaegerTrace): ExportedSpan {
  const references = span.references ?? [];
  const parent = references.find((r) => r.refType === 'CHILD_OF');
  const attributes = tagRecord(span.tags);
  const process = trace.processes[span.processID];
  return {
    traceId: span.traceID,
    spanId: span.spanID,
    parentSpanId: parent?.spanID,
    links: references.filter((r) => r !== parent).map((r) => ({ traceId: r.traceID, spanId: r.spanID })),
    name: span.operationName,
    kind: String(attributes['span.kind'] ?? 'internal'),
    service: process?.serviceName ?? '',
    resource: tagRecord(process?.tags ?? null),
    attributes,
    startTime: span.startTime,
  };
}

function tagRecord(tags: JaegerTag[] | null): Record<string, unknown> {
  return Object.fromEntries((tags ?? []).map((t) => [t.key, t.value]));
}
