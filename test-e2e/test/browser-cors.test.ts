/**
 * CORS as a real browser applies it (headless Chromium from Debian, driven by playwright-core):
 * pages of two loopback origins (they differ by port) call the embedded gateway on a third port
 * with credentials. With CORS_ALLOWED_ORIGINS naming one of them, that page long-polls with
 * cookies, opens an EventSource and a socket.io connection, changes its subscriptions and publishes
 * (both preflighted); the other page is blocked by the browser on each, and its WebSockets are
 * refused. Without a list, credentialed requests are blocked and plain ones pass (`*`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '@gatehouse/embedded';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '@gatehouse/testkit';

// The browser bundle is not among the package's exports: found from its main module.
const socketIoMain = createRequire(import.meta.url).resolve('socket.io-client');
const socketIoClient = readFileSync(
  `${socketIoMain.slice(0, socketIoMain.lastIndexOf('/socket.io-client/'))}/socket.io-client/dist/socket.io.min.js`,
);

/** A page server: its origin is what the browser sends as Origin. */
async function startPageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    if (req.url === '/socket.io.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(socketIoClient);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>cors e2e</title><script src="/socket.io.js"></script>');
  }).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function startGateway(env: Record<string, string>): Promise<EmbeddedGateway> {
  return startEmbeddedGateway({
    ...ephemeralGatewaySettings,
    LONGPOLL_TIMEOUT: '500ms',
    ...env,
  });
}

async function launch(): Promise<Browser> {
  return launchChromium();
}

/** A fresh page (its own browser context, so no cookies are shared) of the given origin. */
async function pageOf(browser: Browser, origin: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${origin}/`);
  return page;
}

/** The fetch options the tests use (serializable into the page). */
interface PageRequest {
  method?: string;
  credentials: 'include' | 'omit';
  headers?: Record<string, string>;
  body?: string;
}

/** What a fetch from the page gives: the status, or the TypeError of a request the browser blocked. */
const fetchFrom = (page: Page, url: string, init: PageRequest) =>
  page.evaluate(
    async ([u, i]) => {
      try {
        const res = await fetch(u, i);
        return { status: res.status, body: await res.text() };
      } catch (err) {
        return { blocked: String(err) };
      }
    },
    [url, init] as const,
  );

/** Long-polls with cookies until an event of `type` arrives (or `polls` polls are done). */
const longPollFor = (page: Page, url: string, type: string, polls: number) =>
  page.evaluate(
    async ([u, t, n]) => {
      const seen: string[] = [];
      for (let i = 0; i < n; i++) {
        try {
          const res = await fetch(u, { credentials: 'include' });
          const body = (await res.json()) as 'ok' | { events: Array<{ type: string }> };
          if (body === 'ok') continue;
          for (const e of body.events) seen.push(e.type);
          if (seen.includes(t)) break;
        } catch (err) {
          return { blocked: String(err), seen };
        }
      }
      return { seen };
    },
    [url, type, polls] as const,
  );

/** Opens an EventSource with credentials (left open); resolves with the welcome token or 'error'. */
const eventSourceFrom = (page: Page, url: string) =>
  page.evaluate(
    (u) =>
      new Promise<{ token?: string; error?: true }>((resolve) => {
        const source = new EventSource(u, { withCredentials: true });
        source.addEventListener('gw.connection.create', (e) => {
          resolve({ token: JSON.parse((e as MessageEvent).data).data.connection_token });
        });
        source.onerror = () => {
          source.close();
          resolve({ error: true });
        };
      }),
    url,
  );

/** A socket.io connection with credentials over the given transport: 'connected' or the error. */
const socketIoFrom = (page: Page, url: string, transport: 'polling' | 'websocket') =>
  page.evaluate(
    ([u, tr]) =>
      new Promise<string>((resolve) => {
        const io = (globalThis as unknown as { io: (u: string, o: object) => SocketLike }).io;
        const socket = io(u, {
          path: '/_gw/v1/socket.io/',
          transports: [tr],
          withCredentials: true,
          reconnection: false,
        });
        socket.on('gw.connection.create', () => {
          socket.disconnect();
          resolve('connected');
        });
        socket.on('connect_error', (err: Error) => resolve(`connect_error: ${err.message}`));
      }),
    [url, transport] as const,
  );
interface SocketLike {
  on(event: string, fn: (arg: Error) => void): void;
  disconnect(): void;
}

/** A plain WebSocket: 'open' or 'error'. */
const webSocketFrom = (page: Page, url: string) =>
  page.evaluate(
    (u) =>
      new Promise<string>((resolve) => {
        const ws = new WebSocket(u);
        ws.onopen = () => {
          ws.close();
          resolve('open');
        };
        ws.onerror = () => resolve('error');
      }),
    url,
  );

const newsEvent = (type: string) =>
  JSON.stringify({ specversion: '1.0', id: crypto.randomUUID(), source: 'cors-e2e', type, data: { n: 1 } });
const subscriptions = (type: string) => encodeURIComponent(JSON.stringify([{ eventType: type }]));

describe('browser CORS with CORS_ALLOWED_ORIGINS', () => {
  let browser: Browser;
  let allowed: { server: Server; origin: string };
  let other: { server: Server; origin: string };
  let gw: EmbeddedGateway;
  let edge: string;

  before(async () => {
    [allowed, other] = await Promise.all([startPageServer(), startPageServer()]);
    gw = await startGateway({
      CORS_ALLOWED_ORIGINS: allowed.origin,
      JWT_SECRET_KEY: 'a-browser-cors-test-secret-long-enough-for-hs256',
    });
    edge = `http://127.0.0.1:${gw.publicPort}`;
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    allowed?.server.close();
    other?.server.close();
    await gw?.stop();
  });

  it('lets the listed origin long-poll with cookies and publish (preflighted)', async () => {
    const page = await pageOf(browser, allowed.origin);
    const poll = `${edge}/_gw/v1/connection/longpolling?subscriptions=${subscriptions('cors.news')}`;
    const welcome = await longPollFor(page, poll, 'gw.subscriptions_set', 3);
    assert.deepEqual(
      welcome,
      { seen: ['gw.connection.create', 'gw.subscriptions_set'] },
      'the cookie came back',
    );
    const published = await fetchFrom(page, `${edge}/_gw/v1/events`, {
      method: 'POST',
      credentials: 'include',
      headers: { 'content-type': 'application/cloudevents+json' },
      body: newsEvent('cors.news'),
    });
    assert.equal(published.status, 202, JSON.stringify(published));
    const news = await longPollFor(page, poll, 'cors.news', 10);
    assert.deepEqual(news, { seen: ['cors.news'] });
    await page.close();
  });

  it('lets the listed origin open an EventSource with credentials and change its subscriptions', async () => {
    const page = await pageOf(browser, allowed.origin);
    const opened = await eventSourceFrom(page, `${edge}/_gw/v1/connection/sse`);
    assert.equal(typeof opened.token, 'string', JSON.stringify(opened));
    const changed = await fetchFrom(page, `${edge}/_gw/v1/connection/sse/${opened.token}/subscriptions`, {
      method: 'PUT',
      credentials: 'include',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ subscriptions: [{ eventType: 'cors.other' }] }),
    });
    assert.equal(changed.status, 204, JSON.stringify(changed));
    await page.close();
  });

  it('lets the listed origin connect with socket.io and a WebSocket', async () => {
    const page = await pageOf(browser, allowed.origin);
    assert.equal(await socketIoFrom(page, edge, 'polling'), 'connected');
    assert.equal(await socketIoFrom(page, edge, 'websocket'), 'connected');
    assert.equal(await webSocketFrom(page, `${edge.replace('http', 'ws')}/_gw/v1/connection/ws`), 'open');
    await page.close();
  });

  it("lets the listed origin read the proxy's 401 of a secured route, preflighted or not", async () => {
    const created = await fetch(`http://127.0.0.1:${gw.apiPort}/v3/apis`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'cors-secured',
        name: 'cors-secured',
        auth_type: 'jwt',
        version_data: {
          default: { endpoints: [{ id: 'orders', method: 'POST', path_regex: '/orders', secured: true }] },
        },
        // Never reached: the token check answers first.
        proxy: { target_url: '127.0.0.1', port: 9 },
      }),
    });
    assert.equal(created.status, 201, await created.text());
    const page = await pageOf(browser, allowed.origin);
    const attempts: Array<Record<string, string>> = [
      { 'content-type': 'application/json' },
      { 'content-type': 'application/json', authorization: 'Bearer expired.or.forged' },
    ];
    for (const headers of attempts) {
      const refused = await fetchFrom(page, `${edge}/orders`, {
        method: 'POST',
        credentials: 'include',
        headers,
        body: '{"item":"tea"}',
      });
      assert.deepEqual(refused, { status: 401, body: 'Authentication failed.' }, JSON.stringify(headers));
    }
    await page.close();
  });

  it('blocks every credentialed request of an origin off the list, and refuses its WebSockets', async () => {
    const page = await pageOf(browser, other.origin);
    const poll = `${edge}/_gw/v1/connection/longpolling?subscriptions=${subscriptions('cors.news')}`;
    const polled = await longPollFor(page, poll, 'gw.subscriptions_set', 1);
    assert.match(polled.blocked ?? '', /Failed to fetch/, JSON.stringify(polled));
    const published = await fetchFrom(page, `${edge}/_gw/v1/events`, {
      method: 'POST',
      credentials: 'include',
      headers: { 'content-type': 'application/cloudevents+json' },
      body: newsEvent('cors.news'),
    });
    assert.match(published.blocked ?? '', /Failed to fetch/, JSON.stringify(published));
    assert.deepEqual(await eventSourceFrom(page, `${edge}/_gw/v1/connection/sse`), { error: true });
    assert.match(await socketIoFrom(page, edge, 'polling'), /^connect_error/);
    assert.match(await socketIoFrom(page, edge, 'websocket'), /^connect_error/);
    assert.equal(await webSocketFrom(page, `${edge.replace('http', 'ws')}/_gw/v1/connection/ws`), 'error');
    await page.close();
  });
});

describe('browser CORS without a list', () => {
  let browser: Browser;
  let page: { server: Server; origin: string };
  let gw: EmbeddedGateway;
  let edge: string;

  before(async () => {
    page = await startPageServer();
    gw = await startGateway({});
    edge = `http://127.0.0.1:${gw.publicPort}`;
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    page?.server.close();
    await gw?.stop();
  });

  it('answers * without credentials: plain requests pass, credentialed ones (cookie long-polling) are blocked', async () => {
    const tab = await pageOf(browser, page.origin);
    const publish = (credentials: PageRequest['credentials']) =>
      fetchFrom(tab, `${edge}/_gw/v1/events`, {
        method: 'POST',
        credentials,
        headers: { 'content-type': 'application/cloudevents+json' },
        body: newsEvent('cors.any'),
      });
    assert.equal((await publish('omit')).status, 202);
    assert.match((await publish('include')).blocked ?? '', /Failed to fetch/);
    const poll = `${edge}/_gw/v1/connection/longpolling`;
    assert.match((await longPollFor(tab, poll, 'gw.connection.create', 1)).blocked ?? '', /Failed to fetch/);
    const plain = await fetchFrom(tab, poll, { credentials: 'omit' });
    assert.equal(plain.body, '"ok"', 'a poll without cookies opens a connection each time');
    assert.deepEqual(await eventSourceFrom(tab, `${edge}/_gw/v1/connection/sse`), { error: true });
    await tab.close();
  });
});
