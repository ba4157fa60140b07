/**
 * A real browser talking TLS straight to a push hub negotiates HTTP/2 (headless Chromium from
 * Debian): its EventSource runs over h2 (the browser's own Resource Timing says so), receives
 * events, and resumes with Last-Event-ID after its connection is dropped; a WebSocket to the same
 * origin connects (the edge offers no RFC 8441 WebSocket over HTTP/2, so the browser opens an
 * HTTP/1.1 connection for it by itself); long-polling and socket.io (its polling over h2, then its
 * WebSocket upgrade) work as well.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CuttableProxy, selfSignedCertificate } from '@gatehouse/testkit';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { type EventTopology, postEvent, startEventTopology } from '../src/event-topology.ts';
import { launchChromium } from '@gatehouse/testkit';

interface Received {
  type: string;
  data: string;
  lastEventId: string;
}

/** The part of the browser's PerformanceResourceTiming read here (Node's type lacks it). */
interface ResourceEntry {
  nextHopProtocol: string;
}

const subscriptions = encodeURIComponent(JSON.stringify([{ eventType: 'browser.h2' }]));

describe('browser over HTTP/2 to a hub serving TLS', () => {
  let t: EventTopology;
  let browser: Browser;
  let context: BrowserContext;
  let tab: Page;
  let proxy: CuttableProxy;
  let origin: string;

  before(async () => {
    t = await startEventTopology({}, { tls: selfSignedCertificate() });
    const hub = t.hubs[0]!;
    // The browser reaches the hub's TLS port through a TCP proxy the test can cut (a dropped network).
    proxy = await CuttableProxy.start({ host: '127.0.0.1', port: Number(hub.env.INBOUND_HTTPS_PORT) });
    origin = `https://127.0.0.1:${proxy.port}`;
    browser = await launchChromium();
    // The certificate is made for this run, so the browser is told to accept it.
    context = await browser.newContext({ ignoreHTTPSErrors: true });
    tab = await context.newPage();
    await tab.goto(`${origin}/_gw/health`);
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await proxy?.close();
    await t?.stop();
  });

  const received = () =>
    tab.evaluate(() => (globalThis as unknown as { received: Received[] }).received ?? []);
  const news = async () => (await received()).filter((r) => r.type === 'browser.h2');
  async function publish(n: number | string) {
    const res = await postEvent(t.publishers[0]!, { type: 'browser.h2', data: { n } });
    assert.equal(res.status, 202);
  }

  it('receives events over an h2 EventSource and resumes after the connection drops', async () => {
    await tab.evaluate((url) => {
      const w = globalThis as unknown as { received: Received[]; source: EventSource };
      w.received = [];
      w.source = new EventSource(url);
      for (const type of ['gw.connection.create', 'gw.subscriptions_set', 'browser.h2']) {
        w.source.addEventListener(type, (e) => {
          const m = e as MessageEvent;
          w.received.push({ type, data: m.data, lastEventId: m.lastEventId });
        });
      }
    }, `${origin}/_gw/v1/connection/sse?subscriptions=${subscriptions}`);
    await tab.waitForFunction(() => (globalThis as unknown as { received: unknown[] }).received.length >= 2);
    await publish(1);
    await tab.waitForFunction(
      () => (globalThis as unknown as { received: Received[] }).received.some((r) => r.type === 'browser.h2'),
      null,
      { timeout: 20_000 },
    );

    // The network drops: the browser's connection is cut; events go on meanwhile.
    proxy.cut();
    await publish(2);
    await publish(3);
    proxy.restore();
    await tab.waitForFunction(
      () =>
        (globalThis as unknown as { received: Received[] }).received.filter((r) => r.type === 'browser.h2')
          .length >= 3,
      null,
      { timeout: 30_000 },
    );
    assert.deepEqual(
      (await news()).map((r) => JSON.parse(r.data).data.n),
      [1, 2, 3],
      'the missed events once, in order, after the reconnect',
    );
    // A stream that ended has its Resource Timing entry: the first EventSource request went over h2.
    const protocols = await tab.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .filter((e) => e.name.includes('/connection/sse'))
        .map((e) => (e as unknown as ResourceEntry).nextHopProtocol),
    );
    assert.ok(protocols.length >= 1, 'a Resource Timing entry for the EventSource request');
    assert.ok(
      protocols.every((p) => p === 'h2'),
      `EventSource requests went over ${protocols.join(', ')}`,
    );
    await tab.evaluate(() => (globalThis as unknown as { source: EventSource }).source.close());
  });

  it('long-polls over h2', async () => {
    const result = await tab.evaluate(async (url) => {
      const first = await fetch(url, { credentials: 'include' });
      await first.text();
      const entry = performance.getEntriesByName(url).at(-1) as ResourceEntry | undefined;
      return { status: first.status, protocol: entry?.nextHopProtocol };
    }, `${origin}/_gw/v1/connection/longpolling?subscriptions=${subscriptions}`);
    assert.deepEqual(result, { status: 200, protocol: 'h2' });
  });

  it('connects socket.io (polling over h2, then the WebSocket upgrade) and receives an event', async () => {
    // The package exports no path to its browser bundle: it is in dist/ of the package's folder.
    const entry = createRequire(import.meta.url).resolve('socket.io-client');
    const folder = entry.slice(0, entry.lastIndexOf('/build/'));
    await tab.addScriptTag({ path: join(folder, 'dist/socket.io.min.js') });
    await tab.evaluate((url) => {
      const w = globalThis as unknown as {
        io: (url: string, opts: unknown) => { onAny(f: (type: string) => void): void };
        sio: Array<{ type: string }>;
      };
      w.sio = [];
      const socket = w.io(url, {
        path: '/_gw/v1/socket.io/',
        auth: { subscriptions: [{ eventType: 'browser.h2' }] },
      });
      // Each CloudEvent is emitted with its type as the event name.
      socket.onAny((type) => w.sio.push({ type }));
    }, origin);
    await tab.waitForFunction(() => (globalThis as unknown as { sio: unknown[] }).sio.length >= 2, null, {
      timeout: 20_000,
    });
    await publish('to socket.io');
    await tab.waitForFunction(
      () =>
        (globalThis as unknown as { sio: Array<{ type: string }> }).sio.some((m) => m.type === 'browser.h2'),
      null,
      { timeout: 20_000 },
    );
    const polled = await tab.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .filter((e) => e.name.includes('/socket.io/'))
        .map((e) => (e as unknown as ResourceEntry).nextHopProtocol),
    );
    assert.ok(
      polled.length >= 1 && polled.every((p) => p === 'h2'),
      `socket.io polled over ${polled.join(', ')}`,
    );
  });

  it('connects a WebSocket to the same origin (over HTTP/1.1, which the browser picks by itself)', async () => {
    const welcome = await tab.evaluate(
      (url) =>
        new Promise<string>((resolve, reject) => {
          const ws = new WebSocket(url);
          ws.onmessage = (m) => {
            resolve(JSON.parse(m.data).type);
            ws.close();
          };
          ws.onerror = () => reject(new Error('websocket error'));
          setTimeout(() => reject(new Error('no websocket message in 20 s')), 20_000);
        }),
      `${origin.replace('https', 'wss')}/_gw/v1/connection/ws?subscriptions=${subscriptions}`,
    );
    assert.equal(welcome, 'gw.connection.create');
  });
});
