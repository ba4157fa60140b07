/**
 * `@gatehouse/client` in real Chromium through replica faults: BROWSER_FAULT_CLIENTS clients
 * (default 200) in Chromium pages, spread over the three transports, receive every event from two
 * push-hub processes on a real Kafka fan-out stream and Redis, behind the nginx edge of
 * deploy/nginx. One hub is killed (SIGKILL) and started again, then both are restarted one after
 * the other (SIGTERM: each moves its clients away over half of its drain window). Counted as the
 * fault suite counts: every event after the first must arrive once at every client, none twice.
 *
 * Each browser context is its own profile: it holds at most 6 HTTP/1.1 connections per host, so a
 * context runs a few clients (WebSocket, SSE and long-polling) within that limit, as the tabs of
 * different users would. Printed: lost, duplicated, resyncs, and the time from a client's stream
 * ending (its `reconnecting` state) to its next event, p50 / p99 over every client and fault. A
 * long poll that fails at a killed hub is usually sent on to the other one by nginx
 * (proxy_next_upstream), so the long-polling clients rarely see a fault at all.
 *
 * Found by it: two long-polling clients in one browser profile shared the connection cookies and
 * took each other's events; the client now keeps its long-poll connection itself (longpoll.ts).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KafkaBus } from '@gatehouse/bus/all';
import {
  dependencyAddress,
  exitAfterFileWhenHung,
  type ServiceProcess,
  sleep,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildClientBundle } from '../src/client-bundle.ts';
import { launchChromium } from '@gatehouse/testkit';
import { edgeInFrontOf, type HubSlot, hubSlots, kafkaHubEnv, startHub } from '../src/hub-pair.ts';
import type { NginxEdge } from '../src/nginx-edge.ts';
import { percentile } from '../src/percentile.ts';
import { stopwatch } from '../src/stopwatch.ts';

after(() => exitAfterFileWhenHung());

const clientCount = Number(process.env['BROWSER_FAULT_CLIENTS'] ?? 200);
/** Per context (one profile): 4 WebSocket, 2 SSE and 2 long-polling clients, 4 HTTP/1.1 connections. */
const tabMix = [
  'websocket',
  'websocket',
  'websocket',
  'websocket',
  'sse',
  'sse',
  'longpolling',
  'longpolling',
];
const rate = 10;

interface ClientRecord {
  transport: string;
  ns: number[];
  resyncs: number;
  states: string[];
  /** Milliseconds from a `reconnecting` state to the next event. */
  back: number[];
}

describe('@gatehouse/client in Chromium through replica faults', () => {
  const run = uniqueName('browser-faults');
  const topic = `${run}-gw-events`;
  let bus: KafkaBus;
  let page: Server;
  let pageUrl: string;
  let edge: NginxEdge;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const tabs: Page[] = [];
  const hubs: ServiceProcess[] = [];
  let slots: HubSlot[];

  before(
    async () => {
      const script = await buildClientBundle();
      page = createServer((req, res) => {
        if (req.url === '/client.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
        else res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>faults</title>');
      }).listen(0, '127.0.0.1');
      await new Promise((r) => page.once('listening', r));
      pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;

      bus = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: run });
      await bus.ensureTopic(topic, 1);
      const env = kafkaHubEnv(run, topic, {
        CORS_ALLOWED_ORIGINS: pageUrl,
        LONGPOLL_TIMEOUT: '5s',
        // Every client comes through nginx from one address.
        MAX_CONNECTIONS_PER_MINUTE: '100000',
        MAX_CONNECTIONS_PER_IP_PER_MINUTE: '100000',
        MAX_CONNECTIONS_PER_ADDRESS: '100000',
        SHUTDOWN_DRAIN_TIMEOUT_MS: '10000',
        DRAIN_SPREAD_PERCENT: '50',
      });
      slots = await hubSlots(run, env);
      hubs.push(...(await Promise.all(slots.map(startHub))));
      edge = await edgeInFrontOf(hubs);
      browser = await launchChromium();
    },
    { timeout: 180_000 },
  );

  after(async () => {
    await browser?.close();
    await edge?.stop();
    await Promise.all(hubs.map((h) => h.stop()));
    await bus?.close();
    page?.close();
  });

  let published = 0;
  const publish = async () => {
    const n = published++;
    const event = { specversion: '1.0', id: `${run}-${n}`, source: 'browser-faults', type: 'greeting' };
    await bus.publish(topic, { value: JSON.stringify({ ...event, data: { n } }) });
  };

  /** A context (one profile) with a page running one Gatehouse client per transport given. */
  async function openTab(transports: string[]): Promise<Page> {
    const context = await browser.newContext();
    contexts.push(context);
    const tab = await context.newPage();
    await tab.goto(`${pageUrl}/`);
    await tab.evaluate(
      async ({ url, transports }) => {
        const { Gatehouse } = await import('/client.js' as string);
        const w = globalThis as unknown as { records: ClientRecord[] };
        w.records = [];
        for (const transport of transports) {
          const record: ClientRecord = { transport, ns: [], resyncs: 0, states: [], back: [] };
          w.records.push(record);
          let downSince: number | undefined;
          const gw = new Gatehouse(url, {
            transports: [transport],
            subscriptions: [{ eventType: 'greeting' }],
          });
          gw.on('event', (e: { data: { n: number } }) => {
            record.ns.push(e.data.n);
            if (downSince !== undefined) record.back.push(Date.now() - downSince);
            downSince = undefined;
          });
          gw.on('state', (s: { state: string }) => {
            record.states.push(s.state);
            if (s.state === 'reconnecting') downSince ??= Date.now();
          });
          gw.on('resync', () => record.resyncs++);
        }
      },
      { url: edge.publicUrl, transports },
    );
    return tab;
  }

  const allRecords = async () =>
    (
      await Promise.all(
        tabs.map((tab) => tab.evaluate(() => (globalThis as unknown as { records: ClientRecord[] }).records)),
      )
    ).flat();

  it(`${clientCount} clients: a hub killed, then a rolling restart: every event once`, {
    timeout: 600_000,
  }, async () => {
    for (let opened = 0; opened < clientCount; opened += tabMix.length)
      tabs.push(await openTab(tabMix.slice(0, Math.min(tabMix.length, clientCount - opened))));
    // Published from now on; a client is counted from the first event it got (a client connects
    // at the head of the stream: what came before it is not its).
    let publishing = true;
    const publisher = (async () => {
      while (publishing) {
        await publish();
        await sleep(1000 / rate);
      }
    })().catch(() => {}); // the bus closed under a failed test
    await waitFor(async () => (await allRecords()).every((r) => r.ns.length > 0), {
      timeoutMs: 120_000,
      intervalMs: 1000,
      what: 'every client connected and receiving',
    }).catch(async (err) => {
      publishing = false;
      const waiting = (await allRecords()).filter((r) => r.ns.length === 0);
      const summary = waiting.slice(0, 5).map((r) => `${r.transport}: ${r.states.join(' ')}`);
      throw new Error(`${(err as Error).message}; ${waiting.length} waiting, such as ${summary.join('; ')}`);
    });
    const time = stopwatch();
    try {
      await sleep(3000);
      process.kill(hubs[0]!.pid, 'SIGKILL');
      await hubs[0]!.exited;
      time.lap('hub-a killed');
      await sleep(2000);
      hubs[0] = await startHub(slots[0]!);
      time.lap('hub-a started again');
      await sleep(5000);
      for (const i of [0, 1]) {
        const exit = await hubs[i]!.stop(30_000);
        assert.equal(exit.code, 0, `hub ${i} stopped cleanly`);
        hubs[i] = await startHub(slots[i]!);
        time.lap(`hub ${i === 0 ? 'a' : 'b'} restarted`);
        await sleep(3000);
      }
      await sleep(3000);
    } finally {
      publishing = false;
      await publisher;
    }
    const last = published - 1;
    const missingOf = (r: ClientRecord) => {
      const seen = new Set(r.ns);
      const missing: number[] = [];
      for (let n = Math.min(...r.ns) + 1; n <= last; n++) if (!seen.has(n)) missing.push(n);
      return missing;
    };
    const lostOf = (r: ClientRecord) => missingOf(r).length;
    await waitFor(async () => (await allRecords()).every((r) => lostOf(r) === 0), {
      timeoutMs: 60_000,
      intervalMs: 1000,
    }).catch(() => {});
    time.lap('caught up');
    const records = await allRecords();
    let lost = 0;
    let duplicated = 0;
    let outOfOrder = 0;
    for (const r of records) {
      lost += lostOf(r);
      duplicated += r.ns.length - new Set(r.ns).size;
      for (let i = 1; i < r.ns.length; i++) if (r.ns[i]! < r.ns[i - 1]!) outOfOrder++;
    }
    const resyncs = records.reduce((s, r) => s + r.resyncs, 0);
    const backOf = (t?: string) => records.filter((r) => !t || r.transport === t).flatMap((r) => r.back);
    const figures = (t?: string) => {
      const back = backOf(t);
      return `p50 ${percentile(back, 50)} ms, p99 ${percentile(back, 99)} ms (${back.length} reconnects)`;
    };
    const lossy = records.filter((r) => lostOf(r) > 0).slice(0, 5);
    for (const r of lossy)
      console.log(
        `lossy ${r.transport} client: lost ${lostOf(r)} (${missingOf(r).join(',')}), first ${Math.min(...r.ns)}, ` +
          `states ${r.states.join(' ')}`,
      );
    console.log(
      `@gatehouse/client in Chromium, ${records.length} clients (${tabs.length} contexts) behind nginx, ` +
        `2 hubs on Kafka, ${last} events at ${rate}/s, a hub killed then a rolling restart: lost ${lost}, ` +
        `duplicated ${duplicated}, out of order ${outOfOrder}, resyncs ${resyncs}; from a stream's end to ` +
        `the next event: all ${figures()}; WebSocket ${figures('websocket')}; SSE ${figures('sse')}; ` +
        `long-polling ${figures('longpolling')}`,
    );
    console.log(`stages: ${time}`);
    assert.equal(records.length, clientCount);
    assert.equal(lost, 0, 'events lost');
    assert.equal(duplicated, 0, 'events duplicated');
    assert.equal(outOfOrder, 0, 'events out of order');
    assert.equal(resyncs, 0, 'resyncs');
  });
});
