/**
 * The demo page (`make run`, /_gw/demo/) is served under a strict Content-Security-Policy: its
 * own inline script and style are allowed by hash, nothing else inline, scripts only from the
 * gateway, connections only to the gateway and the relay's port; and with nosniff. It links its
 * icon, which is served.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '../src/index.ts';

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

describe('demo page policy', () => {
  let gw: EmbeddedGateway;
  before(async () => {
    const bundle = join(mkdtempSync(join(tmpdir(), 'demo-policy-')), 'client.js');
    writeFileSync(bundle, 'export class Gatehouse {}\n');
    gw = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      DEMO_CLIENT_BUNDLE: bundle,
      DEMO_RELAY_PORT: '0',
    });
  });
  after(() => gw?.stop());

  it('serves the page under a CSP that allows its own inline script and style only', async () => {
    const res = await fetch(`http://127.0.0.1:${gw.publicPort}/_gw/demo/`);
    const page = await res.text();
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    const policy = res.headers.get('content-security-policy') ?? '';
    const directives = new Map(
      policy.split(';').map((d) => {
        const [name, ...values] = d.trim().split(/\s+/);
        return [name!, values] as const;
      }),
    );
    assert.deepEqual(directives.get('default-src'), ["'none'"]);
    assert.deepEqual(directives.get('frame-ancestors'), ["'none'"]);
    assert.ok(!policy.includes("'unsafe-inline'") && !policy.includes("'unsafe-eval'"), policy);
    const script = /<script type="module">([\s\S]*?)<\/script>/.exec(page)![1]!;
    const style = /<style>([\s\S]*?)<\/style>/.exec(page)![1]!;
    assert.deepEqual(directives.get('script-src'), ["'self'", sha256(script)]);
    assert.deepEqual(directives.get('style-src'), [sha256(style)]);
    const relay = /<meta name="relay-port" content="(\d+)">/.exec(page)![1]!;
    assert.ok(directives.get('connect-src')!.includes(`ws://127.0.0.1:${relay}`), policy);
    assert.ok(directives.get('connect-src')!.includes("'self'"), policy);
  });

  it('links its icon and serves it (else a browser asks /favicon.ico, which answers 404)', async () => {
    const page = await (await fetch(`http://127.0.0.1:${gw.publicPort}/_gw/demo/`)).text();
    const href = /<link rel="icon" href="([^"]+)"/.exec(page)?.[1];
    assert.equal(href, '/_gw/demo/favicon.svg');
    const res = await fetch(`http://127.0.0.1:${gw.publicPort}${href}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/svg+xml');
    assert.match(await res.text(), /^<svg /);
  });

  it('sends the client bundle with nosniff', async () => {
    const res = await fetch(`http://127.0.0.1:${gw.publicPort}/_gw/demo/client.js`);
    await res.text();
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  });
});
