/**
 * `make run`'s client demo page in Chromium: the embedded gateway with DEMO_CLIENT_BUNDLE serves
 * /_gw/demo/; on each transport the page connects, shows its state and transport, lists an event
 * published with its button, and after its "cut" button dropped every connection of the relay
 * its client goes through, comes back and lists the event published meanwhile: each once. The page
 * loads without an error (its icon linked and served: issue 39).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '@gatehouse/embedded';
import { sleep, waitFor } from '@gatehouse/testkit';
import type { Browser, Page } from 'playwright-core';
import { buildClientBundle } from '../src/client-bundle.ts';
import { launchChromium } from '@gatehouse/testkit';

describe('the client demo page of make run', () => {
  let dir: string;
  let gateway: EmbeddedGateway;
  let browser: Browser;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-demo-'));
    const bundleFile = join(dir, 'gatehouse-client.js');
    await writeFile(bundleFile, await buildClientBundle());
    gateway = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      DEMO_CLIENT_BUNDLE: bundleFile,
      DEMO_RELAY_PORT: '0',
      LONGPOLL_TIMEOUT: '2s',
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await gateway?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const stateOf = (tab: Page) => tab.locator('#state').getAttribute('data-state');
  const listed = (tab: Page) =>
    tab.locator('#events li').evaluateAll((items) => items.map((li) => li.getAttribute('data-n')));

  const until = (what: string, check: () => Promise<boolean>) =>
    waitFor(check, { timeoutMs: 30_000, intervalMs: 100, what });

  for (const transport of ['websocket', 'sse', 'longpolling']) {
    it(`${transport}: publishes, is cut, comes back and lists what was published meanwhile, once`, async (t) => {
      const tab = await browser.newPage();
      t.after(() => tab.close());
      await tab.goto(`http://127.0.0.1:${gateway.publicPort}/_gw/demo/?transports=${transport}`);
      await until('connected', async () => (await stateOf(tab)) === 'connected');
      assert.equal(await tab.locator('#transport').textContent(), transport);

      await tab.click('#publish');
      await until('the first event listed', async () => (await listed(tab)).length === 1);

      const states: string[] = [];
      await tab.exposeFunction('noteState', (s: string) => states.push(s));
      await tab.evaluate(() => {
        const w = globalThis as unknown as {
          gatehouse: { on(e: string, f: (s: { state: string }) => void): void };
          noteState(s: string): void;
        };
        w.gatehouse.on('state', (s) => w.noteState(s.state));
      });
      await tab.click('#cut');
      await until('the cut answered', async () =>
        /connections cut/.test((await tab.locator('#log').textContent()) ?? ''),
      );
      assert.match((await tab.locator('#log').textContent()) ?? '', /^cut: [1-9]\d* connections cut$/);
      await tab.click('#publish');
      await until('the second event listed', async () => (await listed(tab)).length >= 2);
      await until('connected again', async () => (await stateOf(tab)) === 'connected');
      await sleep(500);
      assert.deepEqual(await listed(tab), ['2', '1'], 'each event once, newest first');
      // A long poll cut on a kept-alive connection is sent again by Chromium itself (an idempotent
      // GET on a reused connection that closed): the page's client may not see the cut at all.
      if (transport !== 'longpolling')
        assert.ok(states.includes('reconnecting'), `the client saw the cut: ${states.join(' ')}`);
    });
  }

  it('loads without an error in the page: its icon is linked, no /favicon.ico asked', async (t) => {
    const tab = await browser.newPage();
    t.after(() => tab.close());
    const errors: string[] = [];
    tab.on('console', (m) => m.type() === 'error' && errors.push(`${m.text()} ${m.location().url}`));
    await tab.goto(`http://127.0.0.1:${gateway.publicPort}/_gw/demo/`);
    await until('connected', async () => (await stateOf(tab)) === 'connected');
    // The browser asks for the icon after the load: a second for a 404 to be reported.
    await sleep(1000);
    assert.deepEqual(errors, []);
    const href = await tab
      .locator('link[rel="icon"]')
      .evaluate((link) => new URL(link.getAttribute('href')!, link.baseURI).href);
    assert.equal((await tab.request.get(href)).status(), 200, href);
  });

  it('is not served without DEMO_CLIENT_BUNDLE', async () => {
    const plain = await startEmbeddedGateway({ ...ephemeralGatewaySettings });
    try {
      const res = await fetch(`http://127.0.0.1:${plain.publicPort}/_gw/demo/`);
      assert.notEqual(res.status, 200);
      await res.body?.cancel();
    } finally {
      await plain.stop();
    }
  });
});
