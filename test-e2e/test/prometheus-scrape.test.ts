/**
 * Prometheus against every service as its own process (two hubs, two publishers, two proxies, the
 * blacklist, the REST engine) on the real brokers: a real Prometheus server (Debian's) scrapes every
 * replica, finds every target up and answers a query on a gw_ metric; promtool accepts every
 * /metrics page; and a flood of 1,000 distinct paths, ids, sessions, tokens and event types grows
 * no label value from any of them.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { openSse, uniqueName, waitFor } from '@gatehouse/testkit';
import { postEvent } from '../src/event-topology.ts';
import { type FullTopology, startFullTopology } from '../src/full-topology.ts';
import { type PrometheusServer, startPrometheus } from '../src/prometheus-server.ts';

const subs = (list: unknown) => encodeURIComponent(JSON.stringify(list));
const hostPort = (url: string) => new URL(url).host;
const floodSize = 1000;
const maxEventTypes = 20;

describe('Prometheus scraping every service', () => {
  let t: FullTopology;
  let prometheus: PrometheusServer;
  let backend: Server;

  before(async () => {
    backend = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
    t = await startFullTopology({
      hubEnv: { METRICS_MAX_EVENT_TYPES: String(maxEventTypes) },
      proxyApis: [
        {
          id: 'metrics-shop',
          name: 'metrics-shop',
          version_data: {
            default: { endpoints: [{ id: 'item', method: 'GET', path_regex: '/shop/items/.*' }] },
          },
          proxy: { target_url: '127.0.0.1', port: (backend.address() as AddressInfo).port },
        },
      ],
    });
    const jobs: Record<string, string[]> = {};
    for (const { service, process } of t.processes()) {
      jobs[service] = [...(jobs[service] ?? []), hostPort(process.apiUrl)];
    }
    prometheus = await startPrometheus(jobs);
  });

  after(async () => {
    await prometheus?.stop();
    await t?.stop();
    backend?.close();
  });

  it('finds every replica of every service up and answers a query on a gw_ metric', async () => {
    const expected = t.processes().length;
    const targets = await waitFor(
      async () => {
        const all = await prometheus.targets();
        return all.length === expected && all.every((target) => target.health === 'up') ? all : undefined;
      },
      { timeoutMs: 30_000, what: `all ${expected} targets up` },
    );
    assert.deepEqual(
      Object.fromEntries(
        ['push-hub', 'publisher', 'proxy', 'blacklist', 'rest-engine'].map((job) => [
          job,
          targets.filter((target) => target.job === job).length,
        ]),
      ),
      { 'push-hub': 2, publisher: 2, proxy: 2, blacklist: 1, 'rest-engine': 1 },
    );

    const type = uniqueName('scraped');
    const sse = await openSse(
      `${t.hubs[0]!.publicUrl}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: type }])}`,
    );
    try {
      assert.equal((await postEvent(t.publishers[0]!, { type, data: {} })).status, 202);
      await waitFor(() => sse.events(type).length === 1, { timeoutMs: 15_000 });
    } finally {
      sse.close();
    }
    const delivered = await waitFor(
      async () => {
        const [value] = await prometheus.query('sum(gw_event_deliveries_total{job="push-hub"})');
        return value !== undefined && value > 0 ? value : undefined;
      },
      { timeoutMs: 15_000, what: 'a scraped delivery count' },
    );
    assert.ok(delivered >= 1);
    const [up] = await prometheus.query('count(up == 1)');
    assert.equal(up, expected);
  });

  it('serves /metrics that promtool check metrics accepts on every service', async () => {
    for (const { service, process } of t.processes()) {
      const text = await (await fetch(`${process.apiUrl}/metrics`)).text();
      const result = await promtool(text);
      assert.equal(result.code, 0, `${service} (${process.name}): ${result.output}`);
    }
  });

  it('keeps label values bounded under 1,000 distinct paths, ids, sessions, tokens and event types', async () => {
    const marker = uniqueName('flood').replaceAll('-', '');
    const ids = Array.from({ length: floodSize }, (_, i) => `${marker}x${i}`);
    // Event types are a category a label may name (up to METRICS_MAX_EVENT_TYPES), ids never are.
    const typeMarker = uniqueName('type').replaceAll('-', '');
    const [proxy] = t.proxies;
    const [publisher] = t.publishers;
    const [hub] = t.hubs;
    await inBatches(ids, async (id) => {
      await drain(fetch(`${proxy!.publicUrl}/unknown/${id}?q=${id}`));
      await drain(fetch(`${proxy!.publicUrl}/shop/items/${id}`));
      await drain(
        postEvent(publisher!, { type: `flood.${typeMarker}.${id.slice(marker.length)}`, id, data: {} }),
      );
      await drain(
        fetch(`${t.blacklist.apiUrl}/v3/session-blacklist`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ sessionId: id, validityInSeconds: 60 }),
        }),
      );
      await drain(fetch(`${t.restUrl}/api/echo/${id}`));
      await drain(fetch(`${t.restUrl}/${id}/missing`));
      await drain(fetch(`${hub!.publicUrl}/_gw/v1/connection/sse?jwt=${id}`));
    });
    // Every flood event reached the hubs before their metrics are read.
    await waitFor(
      async () => {
        const text = await (await fetch(`${hub!.apiUrl}/metrics`)).text();
        return sumOf(text, 'gw_events_forwarded_total') >= floodSize;
      },
      { timeoutMs: 30_000, what: 'the flood events at the hub' },
    );

    for (const { service, process } of t.processes()) {
      const series = parseSeries(await (await fetch(`${process.apiUrl}/metrics`)).text());
      const leaked = series.filter((s) => Object.values(s.labels).some((v) => v.includes(marker)));
      assert.deepEqual(
        leaked.map((s) => `${s.name}${JSON.stringify(s.labels)}`).slice(0, 5),
        [],
        `${service} (${process.name}) names a flooded value in a label`,
      );
      for (const [name, count] of seriesPerFamily(series)) {
        assert.ok(count <= 100, `${service}: ${name} has ${count} series`);
      }
    }
    const hubSeries = parseSeries(await (await fetch(`${hub!.apiUrl}/metrics`)).text());
    const forwardedTypes = hubSeries.filter((s) => s.name === 'gw_events_forwarded_total');
    assert.ok(
      forwardedTypes.length <= maxEventTypes + 1,
      `event types beyond METRICS_MAX_EVENT_TYPES count as "other" (${forwardedTypes.length} series)`,
    );
    assert.ok(forwardedTypes.some((s) => s.labels['type'] === 'other'));
  });
});

interface Series {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text exposition: one entry per sample line. */
function parseSeries(text: string): Series[] {
  const series: Series[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[name!] = value!;
    }
    series.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return series;
}

/** Series per metric family (a histogram's buckets, sum and count counted once per label set). */
function seriesPerFamily(series: Series[]): Map<string, number> {
  const sets = new Map<string, Set<string>>();
  for (const s of series) {
    const family = s.name.replace(/_(bucket|sum|count)$/, '');
    const { le: _le, ...labels } = s.labels;
    const set = sets.get(family) ?? new Set<string>();
    set.add(JSON.stringify(labels));
    sets.set(family, set);
  }
  return new Map([...sets].map(([name, set]) => [name, set.size]));
}

function sumOf(text: string, name: string): number {
  return parseSeries(text)
    .filter((s) => s.name === name)
    .reduce((sum, s) => sum + s.value, 0);
}

async function promtool(text: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = execFile('promtool', ['check', 'metrics'], (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? 1) : 0;
      resolve({ code: typeof code === 'number' ? code : 1, output: `${stdout}${stderr}` });
    });
    child.stdin?.end(text);
  });
}

async function drain(response: Promise<Response>): Promise<void> {
  await (await response).arrayBuffer();
}

/** Runs `task` for every item, 25 at a time. */
async function inBatches<T>(items: T[], task: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += 25) await Promise.all(items.slice(i, i + 25).map(task));
}
