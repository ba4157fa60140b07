/**
 * `GET /dashboard/stream` on the internal API: an SSE stream sending this process's `gw_` metrics
 * once a second (connections by transport, subscriptions, events, deliveries, kills, and in the
 * embedded runner every other service's metrics too), for a script watching one process. The page
 * at `/dashboard` is the operator console (console-files.ts), which shows the whole cluster.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Registry, readOnlyMethod, requestPath } from '@gatehouse/service-kit';

export interface DashboardSample {
  name: string;
  help: string;
  type: string;
  values: Array<{ labels: Record<string, string | number>; value: number }>;
}

/** The gw_ metrics of the registry, minus the process and runtime ones (those live in /metrics). */
export async function dashboardSnapshot(registry: Registry): Promise<DashboardSample[]> {
  const metrics = await registry.getMetricsAsJSON();
  return metrics
    .filter((m) => m.name.startsWith('gw_') && !/^gw_(process|nodejs)_/.test(m.name))
    .filter((m) => String(m.type) !== 'histogram')
    .map((m) => ({
      name: m.name,
      help: m.help,
      type: String(m.type),
      values: (m.values as Array<{ labels: Record<string, string | number>; value: number }>).map((v) => ({
        labels: v.labels,
        value: v.value,
      })),
    }));
}

export function createDashboard(registry: Registry, intervalMs = 1000) {
  function stream(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    const send = async () => {
      if (res.destroyed) return;
      res.write(`event: metrics\ndata: ${JSON.stringify(await dashboardSnapshot(registry))}\n\n`);
    };
    void send();
    const timer = setInterval(() => void send(), intervalMs);
    req.on('close', () => clearInterval(timer));
  }

  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const path = requestPath(req);
    if (path !== '/dashboard/stream') return false;
    if (readOnlyMethod(req, res)) stream(req, res);
    return true;
  };
}
