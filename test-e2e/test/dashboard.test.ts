/**
 * The live dashboard (`/dashboard` on the internal API) in headless Chromium: it shows the open
 * connections by transport and follows them as they come and go.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '@gatehouse/embedded';
import { openSse, waitFor } from '@gatehouse/testkit';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../src/headless-chromium.ts';

describe('live dashboard', () => {
  let gw: EmbeddedGateway;
  let browser: Browser;
  before(async () => {
    gw = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
  });

  it('shows the SSE connections as they open and close', async () => {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${gw.apiPort}/dashboard`);
    await page.waitForSelector('text=live');
    const sseCount = page
      .locator('tr[data-metric="gw_connections"]', { hasText: 'transport=sse' })
      .locator('td.v');
    const shows = (n: string) =>
      waitFor(async () => (await sseCount.textContent({ timeout: 500 }).catch(() => null)) === n, {
        timeoutMs: 5000,
        what: `dashboard to show ${n}`,
      });
    const a = await openSse(`http://127.0.0.1:${gw.publicPort}/_gw/v1/connection/sse`);
    const b = await openSse(`http://127.0.0.1:${gw.publicPort}/_gw/v1/connection/sse`);
    await shows('2');
    a.close();
    await shows('1');
    assert.equal(await page.title(), 'Gatehouse dashboard');
    b.close();
    await page.close();
  });
});
