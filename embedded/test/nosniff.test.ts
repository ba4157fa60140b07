/**
 * Every answer carries `X-Content-Type-Options: nosniff`, errors that echo the client's input
 * above all (a browser must never sniff them into HTML): the edge's own, each service's on the
 * edge, the internal API's and the REST engine's on its own port.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openSse, rawRequest } from '@gatehouse/testkit';
import {
  type EmbeddedGateway,
  ephemeralGatewaySettings,
  exampleAppSettings,
  startEmbeddedGateway,
} from '../src/index.ts';

describe('nosniff on every answer', () => {
  let gw: EmbeddedGateway;
  before(async () => {
    gw = await startEmbeddedGateway({ ...ephemeralGatewaySettings, ...exampleAppSettings });
  });
  after(() => gw?.stop());

  it('is sent with the errors and answers of every surface', async () => {
    const edge = `http://127.0.0.1:${gw.publicPort}`;
    const api = `http://127.0.0.1:${gw.apiPort}`;
    const rest = `http://127.0.0.1:${gw.restPort}`;
    const markup = '<script>alert(1)</script>';
    const requests: Array<[string, string, RequestInit?]> = [
      ['edge 404', `${edge}/nowhere/${markup}`],
      ['edge 431', `${edge}/_gw/health`, { headers: { 'x-big': 'a'.repeat(16385) } }],
      ['edge health', `${edge}/_gw/health`],
      ['hub 400', `${edge}/_gw/v1/connection/sse?subscriptions=${encodeURIComponent(markup)}`],
      [
        'publisher 400',
        `${edge}/_gw/v1/events`,
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: markup },
      ],
      ['proxy to the REST engine', `${edge}/api/hello/world`],
      ['REST 404 through the edge', `${edge}/api/${markup}`],
      ['internal API 404', `${api}/v3/${markup}`],
      ['internal API health', `${api}/health`],
      ['REST engine 404', `${rest}/${markup}`],
      ['REST engine answer', `${rest}/api/hello/world`],
    ];
    for (const [what, url, init] of requests) {
      const res = await fetch(url, init);
      await res.arrayBuffer();
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', `${what} (${res.status})`);
    }
  });

  it('is sent once with a hub stream, whose head is written in one piece', async () => {
    const sse = `http://127.0.0.1:${gw.publicPort}/_gw/v1/connection/sse`;
    const subscriptions = encodeURIComponent('[{"eventType":"greeting"}]');
    for (const [what, headers] of [
      ['plain', {}],
      ['from a browser origin', { origin: 'https://app.example' }],
    ] as Array<[string, Record<string, string>]>) {
      const stream = await openSse(`${sse}?subscriptions=${subscriptions}`, headers);
      stream.close();
      assert.equal(stream.status, 200, what);
      // A second copy would read `nosniff, nosniff` here.
      assert.equal(stream.headers.get('x-content-type-options'), 'nosniff', what);
      assert.equal(stream.headers.get('content-type'), 'text/event-stream; charset=utf-8', what);
      assert.equal(stream.headers.get('cache-control'), 'no-cache', what);
    }
  });

  it('is sent with the refusals of upgrades, written on the raw socket', async () => {
    const upgrade = {
      upgrade: 'websocket',
      connection: 'Upgrade',
      'sec-websocket-version': '13',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
    };
    for (const [what, target, extra] of [
      ['no service', '/nowhere', {}],
      ['a path that cannot be made canonical', '/a%2Fb', {}],
    ] as Array<[string, string, Record<string, string>]>) {
      const answer = await rawRequest(gw.publicPort!, target, { ...upgrade, ...extra });
      assert.ok(answer.status >= 400, `${what}: ${answer.status}`);
      assert.match(answer.head, /\r\nx-content-type-options: nosniff\r\n/i, `${what}: ${answer.head}`);
    }
  });
});
