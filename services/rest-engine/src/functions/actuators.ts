/**
 * The actuator functions, as Mercury has them:
 * - `/info`: `app` (name, version, description), `node` (Mercury: `java`), `memory` (max, free,
 *   used), `origin`, `personality: "REST"`, `time` (start, current) and `uptime`;
 * - `/health`: every route of `mandatory.health.dependencies` and `optional.health.dependencies`
 *   is called with header `type: info` (what it checks; cached 5 s, 3 s timeout) and `type: health`
 *   (a message, or an AppException with status and message; 5 s timeout). Each becomes one
 *   `dependency` entry: `route`, `required`, the info fields (`service`, `href`), `status_code`,
 *   `message`. Any mandatory one not 200 → 400 `DOWN`, else 200 `UP`;
 * - `/livenessprobe`: `OK`, or 400 `Unhealthy. Please check '/health' endpoint.` while the last
 *   `/health` was DOWN.
 * JSON, or XML when the caller's Accept starts with application/xml (Mercury's rule).
 */
import { getHeapStatistics } from 'node:v8';
import {
  type AsyncHttpRequest,
  defineFunction,
  EventEnvelope,
  type FunctionRegistration,
  isAppException,
  isEventEnvelope,
} from '@gatehouse/functions';
import type { FunctionRegistry } from './function-registry.ts';

export interface AppIdentity {
  name: string;
  version: string;
  description: string;
  /** Id of this engine instance, also the `origin` of trace records. */
  origin: string;
}

export interface HealthDependencies {
  mandatory: readonly string[];
  optional: readonly string[];
}

interface DependencyReport {
  route: string;
  required: boolean;
  [key: string]: unknown;
}

const infoTimeoutMs = 3_000;
// Mercury waits 10 s, as long as the /health endpoint's own timeout: shorter here, so a stuck
// dependency is named in the answer instead of the whole /health answering 408.
const healthTimeoutMs = 5_000;
const infoCacheMs = 5_000;
const unhealthy = "Unhealthy. Please check '/health' endpoint.";
const forgotten = 'Did you forget to define mandatory.health.dependencies or optional.health.dependencies';

export function actuatorFunctions(
  app: AppIdentity,
  startedAt: Date,
  dependencies: HealthDependencies,
  registry: FunctionRegistry,
): FunctionRegistration[] {
  let healthy = true;
  const infoCache = new Map<string, { info: Record<string, unknown> | undefined; until: number }>();

  async function check(
    route: string,
    required: boolean,
    request: AsyncHttpRequest,
  ): Promise<DependencyReport> {
    const report: DependencyReport = { route, required };
    if (!registry.has(route)) {
      report['status_code'] = 404;
      report['message'] = `Please check - Route ${route} not found`;
      return report;
    }
    try {
      let cached = infoCache.get(route);
      if (!cached || cached.until < Date.now()) {
        const info = await call(registry, route, 'info', request, infoTimeoutMs).catch(() => undefined);
        const body = isEventEnvelope(info) ? info.getBody() : info;
        cached = { info: isPlainObject(body) ? body : undefined, until: Date.now() + infoCacheMs };
        infoCache.set(route, cached);
      }
      Object.assign(report, cached.info);
      const result = await call(registry, route, 'health', request, healthTimeoutMs);
      const status = isEventEnvelope(result) ? (result.getStatus() ?? 200) : 200;
      const message = isEventEnvelope(result) ? result.getBody() : result;
      report['status_code'] = status;
      if (typeof message === 'string' || isPlainObject(message)) report['message'] = message;
    } catch (err) {
      report['status_code'] = isAppException(err) ? err.status : 500;
      report['message'] = (err as Error)?.message ?? String(err);
    }
    return report;
  }

  return [
    defineFunction({
      route: 'health.actuator.service',
      instances: 10,
      handleEvent: async (_headers, request) => {
        // Optional ones first, then mandatory ones: Mercury's order in the list.
        const dependency = await Promise.all([
          ...dependencies.optional.map((route) => check(route, false, request)),
          ...dependencies.mandatory.map((route) => check(route, true, request)),
        ]);
        const up = dependency.every((d) => !d.required || d['status_code'] === 200);
        healthy = up;
        const body: Record<string, unknown> = {
          status: up ? 'UP' : 'DOWN',
          origin: app.origin,
          name: app.name,
          dependency,
        };
        if (dependency.length === 0) body['message'] = forgotten;
        return answer(request, body).setStatus(up ? 200 : 400);
      },
    }),
    defineFunction({
      route: 'info.actuator.service',
      instances: 10,
      handleEvent: (_headers, request) => {
        const heap = getHeapStatistics();
        const now = new Date();
        return answer(request, {
          app: { name: app.name, version: app.version, description: app.description },
          node: { version: process.version },
          memory: {
            max: grouped(heap.heap_size_limit),
            free: grouped(heap.total_heap_size - heap.used_heap_size),
            used: grouped(heap.used_heap_size),
          },
          origin: app.origin,
          personality: 'REST',
          time: { start: startedAt.toISOString(), current: now.toISOString() },
          uptime: elapsedTime(now.getTime() - startedAt.getTime()),
        });
      },
    }),
    defineFunction({
      route: 'liveness.actuator.service',
      instances: 10,
      handleEvent: () =>
        healthy
          ? new EventEnvelope().setHeader('content-type', 'text/plain').setBody('OK')
          : new EventEnvelope().setHeader('content-type', 'text/plain').setStatus(400).setBody(unhealthy),
    }),
  ];
}

function call(
  registry: FunctionRegistry,
  route: string,
  type: 'info' | 'health',
  request: AsyncHttpRequest,
  timeoutMs: number,
): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timeout for ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([registry.invoke(route, { type, my_route: route }, request), timeout]).finally(() =>
    clearTimeout(timer),
  );
}

function answer(request: AsyncHttpRequest, body: Record<string, unknown>): EventEnvelope {
  const xml = (request.getHeader('accept') ?? '').startsWith('application/xml');
  return new EventEnvelope()
    .setHeader('content-type', xml ? 'application/xml' : 'application/json')
    .setBody(body);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);
}

const numberFormat = new Intl.NumberFormat('en-US');
function grouped(n: number): string {
  return numberFormat.format(n);
}

/** Mercury's wording: `1 day 2 hours 3 minutes 4 seconds`, larger units only when reached. */
export function elapsedTime(ms: number): string {
  const units: Array<[number, string]> = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
  ];
  const parts: string[] = [];
  let rest = ms;
  for (const [size, name] of units) {
    if (rest > size) {
      const n = Math.floor(rest / size);
      parts.push(`${n} ${name}${n === 1 ? '' : 's'}`);
      rest -= n * size;
    }
  }
  const seconds = Math.floor(rest / 1000);
  parts.push(`${seconds} second${seconds === 1 ? '' : 's'}`);
  return parts.join(' ');
}
