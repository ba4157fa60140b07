/**
 * A real browser's EventSource (headless Chromium from Debian, driven by playwright-core) against a
 * push-hub replica: it receives the welcome events and a published event, and its `lastEventId`
 * is the event's stream position.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium } from '@gatehouse/testkit';
import { type EventTopology, postEvent, startEventTopology } from '../src/event-topology.ts';

describe('browser EventSource', () => {
  let t: EventTopology;
  let browser: Browser;
  let page: Server;
  let pageUrl: string;

  before(async () => {
    t = await startEventTopology();
    browser = await launchChromium();
    // The page comes from another origin than the hub, as in real deployments (CORS applies).
    page = createServer((_, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>gatehouse e2e</title><p>listening</p>');
    }).listen(0, '127.0.0.1');
    await new Promise((r) => page.once('listening', r));
    pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
  });
  after(async () => {
    await browser?.close();
    page?.close();
    await t?.stop();
  });

  it('receives the welcome events and published events, with the stream position as lastEventId', async () => {
    const tab = await browser.newPage();
    await tab.goto(pageUrl);
    const sseUrl = `${t.hubs[0]!.publicUrl}/_gw/v1/connection/sse?subscriptions=${encodeURIComponent(JSON.stringify([{ eventType: 'browser.news' }]))}`;
    await tab.evaluate((url) => {
      const w = globalThis as unknown as {
        received: Array<{ type: string; data: string; lastEventId: string }>;
      };
      w.received = [];
      const source = new EventSource(url);
      for (const type of ['gw.connection.create', 'gw.subscriptions_set', 'browser.news']) {
        source.addEventListener(type, (e) => {
          const m = e as MessageEvent;
          w.received.push({ type, data: m.data, lastEventId: m.lastEventId });
        });
      }
    }, sseUrl);
    await tab.waitForFunction(() => (globalThis as unknown as { received: unknown[] }).received.length >= 2);
    const res = await postEvent(t.publishers[0]!, {
      type: 'browser.news',
      data: { headline: 'hello browser' },
    });
    assert.equal(res.status, 202);
    await tab.waitForFunction(
      () => (globalThis as unknown as { received: unknown[] }).received.length >= 3,
      null,
      {
        timeout: 15_000,
      },
    );
    const received = await tab.evaluate(
      () =>
        (globalThis as unknown as { received: Array<{ type: string; data: string; lastEventId: string }> })
          .received,
    );
    assert.deepEqual(
      received.map((r) => r.type),
      ['gw.connection.create', 'gw.subscriptions_set', 'browser.news'],
    );
    const news = received[2]!;
    assert.deepEqual(JSON.parse(news.data).data, { headline: 'hello browser' });
    // partition-offset, and the topic's epoch (the first 8 hex digits of its topic id).
    assert.match(news.lastEventId, /^\d+-\d+\.[0-9a-f]{8}$/, 'the Kafka position of the event');
    await tab.close();
  });
});
