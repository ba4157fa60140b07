/**
 * `@gatehouse/client` in real Chromium (Debian's, headless): its browser bundle (esbuild, as a user
 * would bundle it) loaded in a page of another origin, against the real gateway (embedded: every
 * service in this process, memory bus and store) behind a TCP proxy the test cuts or makes block
 * WebSocket upgrades and SSE. Each transport delivers and resumes across cuts while events are
 * published, every event once and in order; blocked transports fall back with nothing lost.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { signJwt, withExpiry } from '@gatehouse/auth';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '@gatehouse/embedded';
import { CuttableProxy, sleep } from '@gatehouse/testkit';
import type { Browser } from 'playwright-core';
import { buildClientBundle } from '../src/client-bundle.ts';
import {
  numberedEvents,
  openClientTab,
  recordOf,
  startClientPage,
  transportOf,
  untilRecord,
} from '../src/client-tab.ts';
import { launchChromium } from '@gatehouse/testkit';

const jwtKey = 'browser-client-test-secret-of-sufficient-length';

describe('@gatehouse/client in Chromium', () => {
  let gateway: EmbeddedGateway;
  let proxy: CuttableProxy;
  let browser: Browser;
  let page: Server;
  let pageUrl: string;
  let edge: string;
  let publish: (count: number) => Promise<number[]>;
  /** JWTs the page fetched, by session. */
  const tokensIssued = new Map<string, number>();

  before(async () => {
    ({ server: page, url: pageUrl } = await startClientPage(await buildClientBundle(), (url, res) => {
      if (url.pathname !== '/jwt') return false;
      // The page's own backend hands out short JWTs, as the README's `token` function expects.
      const session = url.searchParams.get('session') ?? 'anonymous';
      tokensIssued.set(session, (tokensIssued.get(session) ?? 0) + 1);
      const seconds = Number(url.searchParams.get('seconds') ?? 3600);
      const claims = withExpiry({ jti: session, n: tokensIssued.get(session) }, seconds);
      res
        .writeHead(200, { 'content-type': 'text/plain' })
        .end(signJwt(claims, { alg: 'HS256', key: jwtKey }));
      return true;
    }));
    // The page's origin may use long-polling's cookies (credentials).
    gateway = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      LONGPOLL_TIMEOUT: '1s',
      CORS_ALLOWED_ORIGINS: pageUrl,
      JWT_SECRET_KEY: jwtKey,
    });
    edge = `http://127.0.0.1:${gateway.publicPort}`;
    publish = numberedEvents(edge, 'browser.news');
    proxy = await CuttableProxy.start({ host: '127.0.0.1', port: gateway.publicPort! });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    page?.close();
    await proxy?.close();
    await gateway?.stop();
  });

  /** A tab with a Gatehouse client on the given transports, through the proxy. */
  const clientTab = (transports: string[], options: Record<string, unknown> = {}, tokenUrl?: string) =>
    openClientTab(browser, pageUrl, {
      url: `http://127.0.0.1:${proxy.port}`,
      transports,
      eventType: 'browser.news',
      options,
      ...(tokenUrl && { tokenUrl }),
    });
  const until = untilRecord;

  for (const transport of ['websocket', 'sse', 'longpolling']) {
    it(`${transport}: delivers, and resumes across cuts while events are published: every event once, in order`, async () => {
      const tab = await clientTab([transport]);
      await until(tab, (r) => r.states.includes(`connected:${transport}`), 'connected');
      const expected = await publish(5);
      await until(tab, (r) => r.ns.length === 5, 'the first events');
      for (let round = 0; round < 3; round++) {
        proxy.cut();
        expected.push(...(await publish(5)));
        await sleep(300);
        proxy.restore();
        expected.push(...(await publish(5)));
      }
      const r = await until(tab, (r) => r.ns.length >= expected.length, `${expected.length} events`);
      await sleep(500);
      assert.deepEqual((await recordOf(tab)).ns, expected);
      assert.equal(r.resyncs, 0);
      assert.ok(r.states.filter((s) => s === `connected:${transport}`).length >= 2, 'it reconnected');
      await tab.close();
    });
  }

  it('offline, then online: tries again at once instead of waiting out the backoff it grew offline', async () => {
    // A long backoff, so a retry the client waits out shows.
    const tab = await clientTab(['longpolling'], { backoff: { initialMs: 30_000, maxMs: 30_000 } });
    await tab.evaluate(() => {
      const w = globalThis as unknown as {
        gw: { on(name: string, f: (s: { state: string; delayMs?: number }) => void): void };
        timeline: Array<[number, string, number]>;
      };
      w.timeline = [];
      w.gw.on('state', (s) => w.timeline.push([Date.now(), s.state, s.delayMs ?? 0]));
    });
    await until(tab, (r) => r.states.includes('connected:longpolling'), 'connected');
    const expected = await publish(2);
    await until(tab, (r) => r.ns.length === 2, 'the first events');
    await tab.context().setOffline(true);
    type Step = [number, string, number];
    const timeline = () => tab.evaluate(() => (globalThis as unknown as { timeline: Step[] }).timeline);
    // Offline until the client waits a retry at least 10 s away (the backoff is random below its bound).
    let waiting: Step | undefined;
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(200)) {
      const last = (await timeline()).at(-1)!;
      if (last[1] === 'reconnecting' && last[0] + last[2] - Date.now() > 10_000) {
        waiting = last;
        break;
      }
    }
    assert.ok(waiting, `no long retry wait while offline: ${JSON.stringify(await timeline())}`);
    expected.push(...(await publish(3)));
    await tab.context().setOffline(false);
    await until(tab, (r) => r.ns.length >= expected.length, 'the events published while offline');
    const connectedAt = (await timeline()).findLast((step) => step[1] === 'connected')![0];
    assert.ok(
      connectedAt < waiting[0] + waiting[2] - 5000,
      `connected ${connectedAt - waiting[0]} ms after the wait of ${waiting[2]} ms began: it waited the backoff out`,
    );
    assert.deepEqual((await recordOf(tab)).ns, expected);
    await tab.close();
  });

  it('falls back from a blocked websocket to sse, then to longpolling, with nothing lost', async () => {
    const wsUpgrade = /upgrade: websocket/i;
    const sse = /GET \/_gw\/v1\/connection\/sse/;
    proxy.blocked.add(wsUpgrade);
    try {
      const tab = await clientTab(['websocket', 'sse', 'longpolling']);
      await until(tab, (r) => r.states.includes('connected:sse'), 'sse');
      const expected = await publish(5);
      await until(tab, (r) => r.ns.length === 5, 'events over sse');
      proxy.blocked.add(sse);
      proxy.cut();
      expected.push(...(await publish(5)));
      proxy.restore();
      await until(tab, (r) => r.states.includes('connected:longpolling'), 'longpolling');
      expected.push(...(await publish(5)));
      await until(tab, (r) => r.ns.length >= expected.length, 'every event');
      await sleep(500);
      assert.deepEqual((await recordOf(tab)).ns, expected);
      assert.equal(await transportOf(tab), 'longpolling');
      await tab.close();
    } finally {
      proxy.blocked.clear();
    }
  });

  for (const transport of ['websocket', 'sse', 'longpolling']) {
    it(`${transport}: an expiring JWT is fetched again through token, and the client resumes`, async () => {
      const session = `expiring-${transport}`;
      const tab = await clientTab([transport], {}, `/jwt?seconds=2&session=${session}`);
      await until(tab, (r) => r.states.includes(`connected:${transport}`), 'connected');
      const expected: number[] = [];
      for (let i = 0; i < 30; i++) {
        expected.push(...(await publish(1)));
        await sleep(170);
      }
      await until(tab, (r) => r.ns.length >= expected.length, `${expected.length} events`);
      await sleep(500);
      assert.deepEqual((await recordOf(tab)).ns, expected);
      assert.ok((tokensIssued.get(session) ?? 0) >= 3, `tokens fetched: ${tokensIssued.get(session)}`);
      await tab.close();
    });

    it(`${transport}: a blacklisted session ends the client for good`, async () => {
      const session = `killed-${transport}`;
      const tab = await clientTab([transport], {}, `/jwt?session=${session}`);
      await until(tab, (r) => r.states.includes(`connected:${transport}`), 'connected');
      const res = await fetch(`http://127.0.0.1:${gateway.apiPort}/v3/session-blacklist`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sessionId: session, validityInSeconds: 60 }),
      });
      assert.equal(res.status, 201);
      await until(tab, (r) => r.states.at(-1) === 'closed', 'closed');
      const connects = proxy.acceptedAt.length;
      await sleep(1500);
      const r = await recordOf(tab);
      assert.equal(r.states.at(-1), 'closed');
      assert.equal(r.states.filter((s) => s === 'reconnecting').length, 0);
      assert.equal(proxy.acceptedAt.length, connects, 'no reconnect');
      await tab.close();
    });
  }
});
