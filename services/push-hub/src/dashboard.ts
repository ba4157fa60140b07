/**
 * The live dashboard on the internal API: `GET /dashboard` is a small self-contained page that
 * opens `GET /dashboard/stream`, an SSE stream sending this process's `gw_` metrics once a second
 * (connections by transport, subscriptions, events, deliveries, kills, and in the embedded runner
 * every other service's metrics too). No external assets, so it works offline and behind the edge.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Registry, readOnlyMethod, requestPath, sendText } from '@gatehouse/service-kit';

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
    if (path !== '/dashboard/stream' && path !== '/dashboard' && path !== '/dashboard/') return false;
    if (!readOnlyMethod(req, res)) return true;
    if (path === '/dashboard/stream') {
      stream(req, res);
      return true;
    }
    sendText(res, 200, dashboardPage, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-cache',
    });
    return true;
  };
}

const dashboardPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Gatehouse dashboard</title>
<style>
body{font:14px system-ui,sans-serif;margin:2rem;color:#222}h1{font-size:1.3rem}
table{border-collapse:collapse;margin-bottom:1.5rem}td,th{padding:.25rem .75rem;border-bottom:1px solid #ddd;text-align:left}
td.v{text-align:right;font-variant-numeric:tabular-nums}#status{color:#888}
</style></head><body>
<h1>Gatehouse <span id="status">connecting…</span></h1>
<table><thead><tr><th>metric</th><th>labels</th><th>value</th></tr></thead><tbody id="rows"></tbody></table>
<script>
const rows = document.getElementById('rows');
const status = document.getElementById('status');
// Relative to the page, so the dashboard also works under a path prefix at the edge.
const source = new EventSource(location.pathname.replace(/\\/?$/, '/') + 'stream');
source.addEventListener('open', () => { status.textContent = 'live'; });
source.addEventListener('error', () => { status.textContent = 'reconnecting…'; });
source.addEventListener('metrics', (e) => {
  const metrics = JSON.parse(e.data);
  const html = [];
  for (const m of metrics) {
    for (const v of m.values.length ? m.values : [{ labels: {}, value: 0 }]) {
      const labels = Object.entries(v.labels).map(([k, x]) => k + '=' + x).join(', ');
      html.push('<tr data-metric="' + m.name + '"><td title="' + m.help.replace(/"/g, '&quot;') + '">' + m.name +
        '</td><td>' + labels.replace(/</g, '&lt;') + '</td><td class="v">' + v.value + '</td></tr>');
    }
  }
  rows.innerHTML = html.join('');
  status.textContent = 'live ' + new Date().toLocaleTimeString();
});
</script></body></html>`;
