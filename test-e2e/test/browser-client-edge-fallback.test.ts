/**
 * `@gatehouse/client` in real Chromium behind the project's nginx edge (deploy/nginx's template)
 * when that edge blocks what corporate proxies block: first WebSocket upgrades (the Upgrade header
 * stripped, as a proxy that speaks only HTTP/1.1 requests does), then, after the edge is restarted
 * with a stricter policy, SSE too (responses buffered whole, as a proxy that ignores
 * `X-Accel-Buffering` and compresses does: nothing of the stream arrives). The client falls back to SSE,
 * then to long-polling, with every event published across both switches received once, in order.
 *
 * Each policy is first checked to block what it should (a WebSocket upgrade refused at the edge,
 * an SSE stream that delivers no byte), so the test cannot pass through an edge that blocks nothing.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '@gatehouse/embedded';
import { sleep } from '@gatehouse/testkit';
import type { Browser } from 'playwright-core';
import WebSocket from 'ws';
import { buildClientBundle } from '../src/client-bundle.ts';
import { numberedEvents, openClientTab, recordOf, startClientPage, untilRecord } from '../src/client-tab.ts';
import { launchChromium } from '@gatehouse/testkit';
import { type EdgeOptions, type NginxEdge, startNginxEdge } from '../src/nginx-edge.ts';

/** A WebSocket upgrade reaches the hub as a plain GET: the handshake fails. */
const stripUpgrades = `
    location /_gw/v1/connection/ws {
        proxy_pass http://gatehouse_push_hub;
        proxy_set_header Upgrade '';
        proxy_set_header Connection '';
    }`;
/**
 * The SSE stream is compressed and buffered: nginx's gzip holds its output until a 64 KiB buffer
 * fills (the heartbeats and events never get there), as a proxy that ignores `X-Accel-Buffering`
 * and compresses everything does.
 */
const bufferSse = `
    location /_gw/v1/connection/sse {
        proxy_pass http://gatehouse_push_hub;
        proxy_ignore_headers X-Accel-Buffering;
        proxy_buffering on;
        gzip on;
        gzip_types text/event-stream;
        gzip_min_length 0;
        gzip_buffers 1 64k;
        proxy_read_timeout 1h;
    }`;

describe('@gatehouse/client in Chromium behind an edge that blocks transports', () => {
  let gateway: EmbeddedGateway;
  let edge: NginxEdge | undefined;
  let browser: Browser;
  let page: Server;
  let pageUrl: string;
  let publish: (count: number) => Promise<number[]>;

  before(async () => {
    ({ server: page, url: pageUrl } = await startClientPage(await buildClientBundle()));
    gateway = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      LONGPOLL_TIMEOUT: '1s',
      CORS_ALLOWED_ORIGINS: pageUrl,
    });
    publish = numberedEvents(`http://127.0.0.1:${gateway.publicPort}`, 'edge.news');
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    page?.close();
    await edge?.stop();
    await gateway?.stop();
  });

  /** The edge in front of the gateway, on the same ports as the one before it when there was one. */
  async function startEdge(publicLocations: string): Promise<NginxEdge> {
    const gatewayPublic = [`127.0.0.1:${gateway.publicPort}`];
    const gatewayApi = [`127.0.0.1:${gateway.apiPort}`];
    const options: EdgeOptions = { publicLocations, ...(edge && { listen: edge.listen }) };
    return startNginxEdge(
      {
        pushHub: gatewayPublic,
        pushHubApi: gatewayApi,
        publisher: gatewayPublic,
        publisherApi: gatewayApi,
        proxy: gatewayPublic,
        proxyApi: gatewayApi,
        blacklistApi: gatewayApi,
      },
      options,
    );
  }

  /** The edge refuses a WebSocket handshake (what the browser's WebSocket would get). */
  async function assertUpgradeRefused(url: string) {
    const outcome = await new Promise<string>((resolve) => {
      const ws = new WebSocket(`${url.replace('http', 'ws')}/_gw/v1/connection/ws`);
      ws.once('open', () => {
        ws.close();
        resolve('open');
      });
      ws.once('unexpected-response', (_req, res) => resolve(`refused ${res.statusCode}`));
      ws.once('error', (err) => resolve(`error ${err.message}`));
    });
    assert.notEqual(outcome, 'open', 'the edge lets WebSocket upgrades through');
  }

  /** Within 3 s of an SSE connect through the edge, not one byte of the stream (nor its headers). */
  async function assertSseHeld(url: string) {
    const abort = new AbortController();
    const firstBytes = async () => {
      const res = await fetch(`${url}/_gw/v1/connection/sse?subscriptions=[]`, { signal: abort.signal });
      const { value } = await res.body!.getReader().read();
      return `status ${res.status}, ${value?.length ?? 0} bytes`;
    };
    const first = await Promise.race([firstBytes().catch(String), sleep(3000).then(() => 'nothing')]);
    abort.abort();
    assert.equal(first, 'nothing', 'the edge passes the SSE stream through');
  }

  it('falls back to sse when the edge strips upgrades, then to longpolling when it buffers sse too, with nothing lost', async () => {
    edge = await startEdge(stripUpgrades);
    await assertUpgradeRefused(edge.publicUrl);

    const tab = await openClientTab(browser, pageUrl, {
      url: edge.publicUrl,
      transports: ['websocket', 'sse', 'longpolling'],
      eventType: 'edge.news',
      options: { openTimeoutMs: 3000 },
    });
    try {
      await untilRecord(tab, (r) => r.states.includes('connected:sse'), 'sse through the edge');
      const expected = await publish(5);
      await untilRecord(tab, (r) => r.ns.length === 5, 'events over sse');

      // The edge goes (every connection cut) and comes back on the same port buffering SSE.
      await edge.stop();
      expected.push(...(await publish(5)));
      edge = await startEdge(stripUpgrades + bufferSse);
      await assertUpgradeRefused(edge.publicUrl);
      await assertSseHeld(edge.publicUrl);
      await untilRecord(
        tab,
        (r) => r.states.includes('connected:longpolling'),
        'longpolling through the edge',
      );
      expected.push(...(await publish(5)));

      const r = await untilRecord(tab, (r) => r.ns.length >= expected.length, `${expected.length} events`);
      await sleep(1000);
      const final = await recordOf(tab);
      assert.deepEqual(final.ns, expected, 'every event once, in order');
      assert.equal(new Set(final.ids).size, final.ids.length);
      assert.equal(r.resyncs, 0);
      assert.ok(!final.states.includes('connected:websocket'), `never on websocket: ${final.states}`);
      assert.equal(final.states.at(-1), 'connected:longpolling', `${final.states}`);
    } finally {
      await tab.close();
    }
  });
});
