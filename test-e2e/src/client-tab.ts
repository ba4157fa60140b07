/**
 * A browser tab running `@gatehouse/client` (the page serves its bundle as `/client.js`) that records
 * what its client gets into `window.record`, and the numbered events the browser tests publish:
 * event n carries `data.n`, so a record of ns shows at once what was lost, doubled or reordered.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sleep } from '@gatehouse/testkit';
import type { Browser, Page } from 'playwright-core';

export interface PageRecord {
  /** `data.n` of each event, in arrival order. */
  ns: number[];
  /** Each event's id, in arrival order. */
  ids: string[];
  /** `state` or `state:transport`, in order. */
  states: string[];
  resyncs: number;
}

/**
 * The page's own origin: `/client.js` (the bundle), what `route` answers (true when it did), an
 * empty page otherwise.
 */
export async function startClientPage(
  script: string,
  route: (url: URL, res: ServerResponse) => boolean = () => false,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://page');
    if (url.pathname === '/client.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    else if (!route(url, res))
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>client e2e</title>');
  }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export interface ClientTabOptions {
  /** The gateway as the page reaches it. */
  url: string;
  transports: string[];
  eventType: string;
  /** More options of the client (serialisable). */
  options?: Record<string, unknown>;
  /** A path of the page's origin that hands out JWTs: the client's `token` function fetches it. */
  tokenUrl?: string;
}

/** A new tab on `pageUrl` with a client recording into `window.record` (and itself as `window.gw`). */
export async function openClientTab(browser: Browser, pageUrl: string, o: ClientTabOptions): Promise<Page> {
  const tab = await browser.newPage();
  await tab.goto(`${pageUrl}/`);
  await tab.evaluate(async ({ url, transports, eventType, options, tokenUrl }) => {
    const { Gatehouse } = await import('/client.js' as string);
    const w = globalThis as unknown as { record: PageRecord; gw: unknown };
    w.record = { ns: [], ids: [], states: [], resyncs: 0 };
    const gw = new Gatehouse(url, {
      transports,
      subscriptions: [{ eventType }],
      backoff: { initialMs: 100, maxMs: 1000 },
      ...(tokenUrl && { token: async () => (await fetch(tokenUrl)).text() }),
      ...options,
    });
    gw.on('event', (e: { id: string; data: { n: number } }) => {
      w.record.ns.push(e.data.n);
      w.record.ids.push(e.id);
    });
    gw.on('state', (s: { state: string; transport?: string }) =>
      w.record.states.push(s.transport ? `${s.state}:${s.transport}` : s.state),
    );
    gw.on('resync', () => w.record.resyncs++);
    w.gw = gw;
  }, o);
  return tab;
}

export const recordOf = (tab: Page): Promise<PageRecord> =>
  tab.evaluate(() => (globalThis as unknown as { record: PageRecord }).record);

export const transportOf = (tab: Page): Promise<string | undefined> =>
  tab.evaluate(() => (globalThis as unknown as { gw: { transport: string | undefined } }).gw.transport);

/** The tab's record once `check` holds; throws with the record after `timeoutMs`. */
export async function untilRecord(
  tab: Page,
  check: (r: PageRecord) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<PageRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await recordOf(tab);
    if (check(r)) return r;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(r)}`);
    await sleep(100);
  }
}

/** Publishes numbered events of `type` to the gateway at `edge`; resolves with the numbers sent. */
export function numberedEvents(edge: string, type: string): (count: number) => Promise<number[]> {
  let published = 0;
  return async (count) => {
    const ns: number[] = [];
    for (let i = 0; i < count; i++) {
      const n = ++published;
      const res = await fetch(`${edge}/_gw/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ specversion: '1.0', id: `${type}-${n}`, type, source: 'e2e', data: { n } }),
      });
      assert.equal(res.status, 202);
      ns.push(n);
    }
    return ns;
  };
}
