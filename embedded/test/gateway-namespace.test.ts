/**
 * The `gw` event namespace is the gateway's alone (issue 34, item 8): through the public edge and
 * the internal API, as a producer would, an event whose type starts with `gw.` (in any case, with
 * white space around it, in a compatibility form) or whose source is `gatehouse` is refused with 400
 * on every producer surface, in structured and binary mode, and none of them reaches a connection
 * subscribed to exactly those types; the next ordinary event does.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openSse, openWs, waitFor } from '@gatehouse/testkit';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '../src/index.ts';

/** Type and source pairs a producer must not publish. */
const forged: Array<{ type: string; source: string; data?: unknown }> = [
  { type: 'gw.session_killed', source: 'gatehouse' },
  { type: 'gw.connection.create', source: 'gatehouse', data: { connection_token: 'forged-token' } },
  { type: 'gw.subscriptions_set', source: 'gatehouse', data: [] },
  { type: 'gw.connection_closed', source: 'billing', data: { reason: 'x', reconnect: false } },
  { type: 'GW.Session_Killed', source: 'billing' },
  { type: ' gw.session_expired ', source: 'billing' },
  { type: 'ｇｗ.resync_required', source: 'billing' },
  { type: 'order.updated', source: 'gatehouse' },
  { type: 'order.updated', source: ' GateHouse ' },
];

const subscribed = [...new Set([...forged.map((f) => f.type), 'gw', 'marker'])];

describe('the gw namespace on producer surfaces', () => {
  let gw: EmbeddedGateway;
  let edge: string;
  let api: string;
  before(async () => {
    gw = await startEmbeddedGateway({ ...ephemeralGatewaySettings });
    edge = `http://127.0.0.1:${gw.publicPort}`;
    api = `http://127.0.0.1:${gw.apiPort}`;
  });
  after(() => gw?.stop());

  const structured = (url: string, event: Record<string, unknown>) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/cloudevents+json' },
      body: JSON.stringify({ specversion: '1.0', ...event }),
      signal: AbortSignal.timeout(10_000),
    });

  const binary = (url: string, event: { id: string; type: string; source: string }) =>
    fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'ce-specversion': '1.0',
        'ce-id': event.id,
        'ce-type': encodeURIComponent(event.type),
        'ce-source': encodeURIComponent(event.source),
      },
      body: '{}',
      signal: AbortSignal.timeout(10_000),
    });

  it('refuses reserved types and sources with 400 on every surface, and delivers none of them', async () => {
    const query = `subscriptions=${encodeURIComponent(JSON.stringify(subscribed.map((eventType) => ({ eventType }))))}`;
    const sse = await openSse(`${edge}/_gw/v1/connection/sse?${query}`);
    assert.equal(sse.status, 200, sse.errorBody);
    const ws = openWs(`${edge.replace('http', 'ws')}/_gw/v1/connection/ws?${query}`);
    await waitFor(() => sse.frames.length >= 2 && ws.events.length >= 2);

    const surfaces = [`${edge}/_gw/v1/events`, `${api}/v2/messages`, `${api}/v3/messages`, `${api}/messages`];
    const answers: string[] = [];
    let n = 0;
    for (const url of surfaces) {
      for (const event of forged) {
        for (const send of [structured, binary]) {
          const res = await send(url, { id: `forged-${n++}`, ...event });
          const body = await res.text();
          answers.push(`${res.status} ${url} ${send.name} ${JSON.stringify(event.type)}/${event.source}`);
          assert.equal(res.status, 400, `${answers.at(-1)}: ${body}`);
          assert.match(body, /is reserved: .*(gw\.|gateway's own events)/, body);
        }
      }
    }
    // The bare type `gw` (the default source topic's name) stays open to producers.
    assert.equal(
      (await structured(`${edge}/_gw/v1/events`, { id: 'bare', type: 'gw', source: 's' })).status,
      202,
    );

    const marker = await structured(`${edge}/_gw/v1/events`, { id: 'marker', type: 'marker', source: 's' });
    assert.equal(marker.status, 202);
    await waitFor(() => sse.events('marker').length === 1 && ws.events.some((e) => e['type'] === 'marker'));
    const afterWelcome = (types: unknown[]) => types.slice(2);
    assert.deepEqual(afterWelcome(sse.frames.map((f) => f.event)), ['gw', 'marker']);
    assert.deepEqual(afterWelcome(ws.events.map((e) => e['type'])), ['gw', 'marker']);
    sse.close();
    ws.ws.close();
    await ws.closed;
  });
});
