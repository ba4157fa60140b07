/**
 * Debian's Chromium, headless, for the browser tests (CHROMIUM_PATH overrides the path): no
 * sandbox (tests run as root), and none of the background traffic a desktop browser makes, so it
 * talks only to the loopback servers a test starts. Headless Chromium hides scrollbars; a test of
 * a layout (does a scrollbar show?) asks for them, drawn as on a Linux desktop. In the test kit so
 * the client package's own tests can load a page too.
 */
import type { Browser } from 'playwright-core';

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchChromium(options: { scrollbars?: boolean } = {}): Promise<Browser> {
  // Loaded when a test asks for a browser: every other user of the test kit is spared it.
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: chromiumPath,
    ...(options.scrollbars && { ignoreDefaultArgs: ['--hide-scrollbars'] }),
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
