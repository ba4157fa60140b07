/**
 * Acknowledged delivery (docs/client.md "Acknowledged delivery") in real Chromium: a page with the
 * client's browser bundle handles k of n events, then the tab is closed for real (CDP
 * Target.closeTarget) or reloaded, with the last handled events still in the client's one-second
 * batch. Only the browser's `pagehide` and its `keepalive` fetch can tell the gateway then, since
 * the page's timers die with it: a page of the same session gets exactly the other n − k, so the
 * application handled every event once (0 lost, 0 duplicated).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signJwt, withExpiry } from '@gatehouse/auth';
import { sleep } from '@gatehouse/testkit';
import type { Page } from 'playwright-core';
import { type BrowserGateway, startBrowserGateway } from '../src/browser-gateway.ts';
import { numberedEvents } from '../src/client-tab.ts';

const jwtKey = 'browser-ack-test-secret-of-sufficient-length';
const eventType = 'browser.orders';

interface Handling {
  /** `data.n` of each event the application finished handling, in order. */
  handled: number[];
  /** `data.n` of each event handed to the application. */
  received: number[];
}

describe('acknowledged delivery in Chromium', () => {
  let g: BrowserGateway;
  let publish: (count: number) => Promise<number[]>;

  before(async () => {
    // ACK_TIMEOUT 30 s: the client batches handled events for a second; nothing is redelivered meanwhile.
    g = await startBrowserGateway({ JWT_SECRET_KEY: jwtKey, ACK_TIMEOUT: '30s' });
    publish = numberedEvents(g.edge, eventType);
  });
  after(async () => {
    await g?.stop();
  });

  const token = (sub: string) =>
    signJwt(withExpiry({ jti: `j-${sub}`, sub }, 3600), { alg: 'HS256', key: jwtKey });

  /**
   * Starts a client of the ack session in `tab` (on its page already). Its listener handles the
   * first `now` events at once, those up to the `later`th when the test calls `window.release()`,
   * and never the others (a promise that never settles).
   */
  const startClient = (tab: Page, sub: string, session: string, now: number, later: number) =>
    tab.evaluate(
      async ({ url, token, session, now, later, eventType }) => {
        const { Gatehouse } = await import('/client.js' as string);
        const w = globalThis as unknown as Handling & {
          release: () => void;
          gw: { state: { state: string } };
        };
        w.handled = [];
        w.received = [];
        let release = () => {};
        const released = new Promise<void>((resolve) => (release = resolve));
        w.release = release;
        const gw = new Gatehouse(url, {
          transports: ['websocket'],
          subscriptions: [{ eventType }],
          token,
          ack: { session },
        });
        let first: number | undefined;
        gw.on('event', async (e: { data: { n: number } }) => {
          const n = e.data.n;
          w.received.push(n);
          // Counted from the first event this client got: the tests' numbers run on across them.
          first ??= n;
          if (n - first >= later) await new Promise(() => {});
          if (n - first >= now) await released;
          w.handled.push(n);
        });
        w.gw = gw;
      },
      { url: g.edge, token: token(sub), session, now, later, eventType },
    );

  const handlingOf = (tab: Page): Promise<Handling> =>
    tab.evaluate(() => {
      const { handled, received } = globalThis as unknown as Handling;
      return { handled: [...handled], received: [...received] };
    });

  const until = async (tab: Page, check: (h: Handling) => boolean, what: string): Promise<Handling> => {
    for (const deadline = Date.now() + 30_000; ; await sleep(100)) {
      const h = await handlingOf(tab);
      if (check(h)) return h;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(h)}`);
    }
  };

  const connected = (tab: Page) =>
    tab.waitForFunction(
      () => (globalThis as unknown as { gw: { state: { state: string } } }).gw.state.state === 'connected',
      undefined,
      { timeout: 30_000 },
    );

  /**
   * A tab of the session handles events n₀+1 … n₀+k of n₀+1 … n₀+n (the last three of them just
   * before it goes, still in the batch), then `leave` closes or reloads it. Returns what it handled.
   */
  const handleSomeThenLeave = async (
    tab: Page,
    sub: string,
    k: number,
    n: number,
    leave: () => Promise<void>,
  ) => {
    await tab.goto(`${g.pageUrl}/`);
    await startClient(tab, sub, 'inbox', k - 3, k);
    await connected(tab);
    const ns = await publish(n);
    await until(tab, (h) => h.received.includes(ns.at(-1)!), 'every event handed over');
    const before = await handlingOf(tab);
    assert.deepEqual(before.received, ns, 'each event handed over once, in order');
    assert.deepEqual(before.handled, ns.slice(0, k - 3));
    // The page is gone before the batch's second is up.
    await tab.evaluate(() => (globalThis as unknown as { release: () => void }).release());
    const handled = (await handlingOf(tab)).handled;
    await leave();
    assert.deepEqual(handled, ns.slice(0, k));
    return { ns, handled };
  };

  it('a tab closed mid-batch: a new tab of the session gets exactly the events it did not handle', async () => {
    const first = await g.browser.newPage();
    const { ns, handled } = await handleSomeThenLeave(first, 'closer', 6, 10, () => first.close());
    const second = await g.browser.newPage();
    await second.goto(`${g.pageUrl}/`);
    await startClient(second, 'closer', 'inbox', Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    const rest = await until(second, (h) => h.handled.includes(ns.at(-1)!), 'the rest');
    await sleep(300);
    assert.deepEqual((await handlingOf(second)).handled, ns.slice(6), 'exactly the other n − k');
    assert.deepEqual(
      [...handled, ...rest.handled].sort((a, b) => a - b),
      ns,
      '0 lost, 0 duplicated',
    );
    await second.close();
  });

  it('a tab reloaded mid-batch: the client of the new page gets exactly the events the old one did not handle', async () => {
    const tab = await g.browser.newPage();
    const { ns, handled } = await handleSomeThenLeave(tab, 'reloader', 5, 8, async () => {
      await tab.reload();
    });
    await startClient(tab, 'reloader', 'inbox', Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    const rest = await until(tab, (h) => h.handled.includes(ns.at(-1)!), 'the rest');
    await sleep(300);
    assert.deepEqual((await handlingOf(tab)).handled, ns.slice(5), 'exactly the other n − k');
    assert.deepEqual(
      [...handled, ...rest.handled].sort((a, b) => a - b),
      ns,
      '0 lost, 0 duplicated',
    );
    await tab.close();
  });
});
