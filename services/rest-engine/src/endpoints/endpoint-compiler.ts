/**
 * Turns the merged rest.yaml into compiled endpoints. Each entry is checked against the JSON Schema
 * and then for what a schema cannot see (an unknown cors or headers id, a bad url segment). An
 * invalid entry is skipped with an error that names it and the reason; the others still load. A
 * route that no function serves is not an invalid entry (Mercury keeps it too): it is a warning at
 * start and a 503 at request time, so the mistake shows instead of hiding behind a 404.
 */
import { pairsWildcardWithCredentials } from '@gatehouse/service-kit';
import { authRoutes, parseAuthSelector } from './authentication.ts';
import { relayRoute } from '../functions/index.ts';
import { type CorsSet, compileCorsSet } from './cors.ts';
import { defaultTimeoutMs, type Endpoint, type RelayTarget } from './endpoint.ts';
import { endpointTimeout } from './endpoint-timeout.ts';
import { compileHeaderTransformSet, type HeaderTransformSet } from './header-transform.ts';
import {
  checkAgainstSchema,
  type MergedRestConfig,
  type ProblemReport,
  type SourcedEntry,
} from '../config/index.ts';
import { parseUrlPattern } from '../routing/index.ts';

export interface CompileContext {
  routeExists(route: string): boolean;
  /** Routes an endpoint may not name (the engine's own response writer). */
  reservedRoutes: ReadonlySet<string>;
  traceIdHeader: string;
  correlationIdHeader: string;
  traceparentHeader: string;
  report: ProblemReport;
}

export function compileEndpoints(merged: MergedRestConfig, ctx: CompileContext): Endpoint[] {
  const cors = compileCorsSets(merged.cors, ctx.report);
  const headerSets = compileHeaderSets(merged.headers, ctx.report);
  const endpoints: Endpoint[] = [];
  for (const entry of merged.rest) {
    const result = compileEndpoint(entry, cors, headerSets, ctx);
    if (typeof result === 'string')
      ctx.report.error(`Skip invalid REST entry ${describeEntry(entry)} - ${result}`);
    else endpoints.push(result);
  }
  return endpoints;
}

export function describeEntry(entry: SourcedEntry): string {
  const v = (entry.value ?? {}) as Record<string, unknown>;
  const what =
    typeof v['url'] === 'string'
      ? ` (${Array.isArray(v['methods']) ? v['methods'].join(',') : '?'} ${v['url']})`
      : '';
  return `rest[${entry.index}]${what} in ${entry.source}`;
}

function compileEndpoint(
  entry: SourcedEntry,
  corsSets: Map<string, CorsSet>,
  headerSets: Map<string, HeaderTransformSet>,
  ctx: CompileContext,
): Endpoint | string {
  const verdict = checkAgainstSchema('endpoint', entry.value);
  if (verdict.errors.length) return verdict.errors.join('; ');
  if (verdict.unknownKeys.length) {
    ctx.report.warn(
      `REST entry ${describeEntry(entry)} has unknown keys, ignored: ${verdict.unknownKeys.join(', ')}`,
    );
  }
  const v = entry.value as Record<string, unknown>;

  const services = [v['service']]
    .flat()
    .map((s) => String(s).trim())
    .filter((s) => s !== '');
  const [first = '', ...rest] = services;
  let relay: RelayTarget | undefined;
  if (/^https?:\/\//i.test(first)) {
    const target = parseRelay(first, v);
    if (typeof target === 'string') return target;
    relay = target;
  }
  const primary = relay ? relayRoute : first.toLowerCase();
  const secondaries = [...new Set(rest.map((s) => s.toLowerCase()))].filter((s) => s !== primary);
  const routes = relay ? secondaries : [primary, ...secondaries];
  const reserved = routes.find((route) => ctx.reservedRoutes.has(route));
  if (reserved) return `${reserved} is reserved for the engine`;
  // Kept, as Mercury keeps it: the URL answers 503 `Service <route> not reachable`, not 404.
  for (const route of routes.filter((r) => !ctx.routeExists(r)))
    ctx.report.warn(`REST entry ${describeEntry(entry)}: ${notRegistered('service', route)}`);
  // Without `flow` the caller could pick the flow with its own x-flow-id header (Mercury's hazard).
  if (primary === 'http.flow.adapter' && typeof v['flow'] !== 'string') {
    return 'service http.flow.adapter needs a flow (the id of the flow to run)';
  }
  if (v['flow'] !== undefined && primary !== 'http.flow.adapter') {
    ctx.report.warn(`REST entry ${describeEntry(entry)}: flow is used only with service http.flow.adapter`);
  }

  let authentication: Endpoint['authentication'];
  if (v['authentication'] !== undefined) {
    const selector = parseAuthSelector(v['authentication']);
    if (typeof selector === 'string') return selector;
    for (const route of authRoutes(selector).filter((r) => !ctx.routeExists(r)))
      ctx.report.warn(
        `REST entry ${describeEntry(entry)}: ${notRegistered('authentication service', route)}`,
      );
    authentication = selector;
  }

  let cors: CorsSet | undefined;
  if (v['cors'] !== undefined) {
    cors = corsSets.get(String(v['cors']));
    if (!cors) return `cors ID ${String(v['cors'])} is not found`;
  }
  let headers: HeaderTransformSet | undefined;
  if (v['headers'] !== undefined) {
    headers = headerSets.get(String(v['headers']));
    if (!headers) return `headers ID ${String(v['headers'])} is not found`;
  }

  const timeoutMs = v['timeout'] === undefined ? defaultTimeoutMs : endpointTimeout(v['timeout']);
  if (typeof timeoutMs === 'string') return timeoutMs;

  let url: Endpoint['url'];
  try {
    url = parseUrlPattern(String(v['url']));
  } catch (err) {
    return (err as Error).message;
  }
  const methods = [...new Set((v['methods'] as string[]).map((m) => m.toUpperCase()))].filter(
    (m) => m !== 'OPTIONS',
  );
  if (methods.length === 0) return 'methods must name at least one method besides OPTIONS';

  return {
    label: `${methods.join(',')} ${v['url']}`,
    source: entry.source,
    url,
    methods,
    primary,
    secondaries,
    relay,
    timeoutMs,
    timeoutGiven: v['timeout'] !== undefined,
    cors,
    headers,
    authentication,
    tracing: v['tracing'] === true,
    traceIdHeader: String(v['trace.id.header'] ?? ctx.traceIdHeader).toLowerCase(),
    traceparentHeader: String(v['traceparent.header'] ?? ctx.traceparentHeader).toLowerCase(),
    correlationIdHeader: String(v['correlation.id.header'] ?? ctx.correlationIdHeader).toLowerCase(),
    flow: typeof v['flow'] === 'string' ? v['flow'] : undefined,
    upload: v['upload'] === true,
  };
}

function notRegistered(what: string, route: string): string {
  return `${what} ${route} has no function: requests answer 503 Service ${route} not reachable`;
}

function parseRelay(target: string, v: Record<string, unknown>): RelayTarget | string {
  let origin: URL;
  try {
    origin = new URL(target);
  } catch {
    return `invalid relay URL ${target}`;
  }
  if (origin.pathname !== '/' && origin.pathname !== '')
    return `service URL ${target} - Must not contain path`;
  if (origin.search) return `service URL ${target} - Must not contain query`;
  const rewrite = v['url_rewrite'] as [string, string] | undefined;
  return { origin, rewrite, trustAllCert: v['trust_all_cert'] === true };
}

function compileCorsSets(entries: Map<string, SourcedEntry>, report: ProblemReport): Map<string, CorsSet> {
  const out = new Map<string, CorsSet>();
  for (const [id, entry] of entries) {
    const verdict = checkAgainstSchema('cors', entry.value);
    const compiled = verdict.errors.length
      ? verdict.errors.join('; ')
      : compileCorsSet(entry.value as Record<string, unknown>);
    if (typeof compiled === 'string')
      report.error(`Skip invalid cors definition '${id}' in ${entry.source} - ${compiled}`);
    else {
      // Kept as written (Mercury's rule), but the mistake browsers refuse is pointed out.
      if (pairsWildcardWithCredentials([...compiled.options, ...compiled.headers])) {
        report.warn(
          `cors '${id}' in ${entry.source} pairs Access-Control-Allow-Origin * with Access-Control-Allow-Credentials true, which browsers refuse; name the page's origin (api.origin) instead`,
        );
      }
      out.set(id, compiled);
    }
  }
  return out;
}

function compileHeaderSets(
  entries: Map<string, SourcedEntry>,
  report: ProblemReport,
): Map<string, HeaderTransformSet> {
  const out = new Map<string, HeaderTransformSet>();
  for (const [id, entry] of entries) {
    const verdict = checkAgainstSchema('headerSet', entry.value);
    if (verdict.errors.length) {
      report.error(
        `Skip invalid headers definition '${id}' in ${entry.source} - ${verdict.errors.join('; ')}`,
      );
      continue;
    }
    const { set, warnings } = compileHeaderTransformSet(entry.value as Record<string, unknown>);
    for (const w of warnings) report.warn(w);
    out.set(id, set);
  }
  return out;
}
