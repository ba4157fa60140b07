/**
 * What a test of browsers against the gateway starts: the page that serves `@gatehouse/client`,
 * an embedded gateway whose CORS allows that page, and Chromium; `stop` closes all three.
 */
import type { Server } from 'node:http';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '@gatehouse/embedded';
import { launchChromium } from '@gatehouse/testkit';
import type { Browser } from 'playwright-core';
import { buildClientBundle } from './client-bundle.ts';
import { startClientPage } from './client-tab.ts';

export interface BrowserGateway {
  gateway: EmbeddedGateway;
  /** The gateway's public edge. */
  edge: string;
  pageUrl: string;
  browser: Browser;
  stop(): Promise<void>;
}

/** `settings` go over the ephemeral ones; CORS_ALLOWED_ORIGINS is the page's origin. */
export async function startBrowserGateway(settings: Record<string, string>): Promise<BrowserGateway> {
  let page: Server | undefined;
  let gateway: EmbeddedGateway | undefined;
  let browser: Browser | undefined;
  const stop = async () => {
    await browser?.close();
    page?.close();
    await gateway?.stop();
  };
  try {
    let pageUrl: string;
    ({ server: page, url: pageUrl } = await startClientPage(await buildClientBundle()));
    gateway = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      ...settings,
      CORS_ALLOWED_ORIGINS: pageUrl,
    });
    browser = await launchChromium();
    return { gateway, edge: `http://127.0.0.1:${gateway.publicPort}`, pageUrl, browser, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
