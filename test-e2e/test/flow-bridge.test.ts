/**
 * The bridge from flows to frontends, from the outside: an HTTP request to a REST endpoint (through
 * the public edge of the embedded gateway) runs a flow whose `gatehouse.event.publish` task puts a
 * CloudEvent on the fan-out stream, and subscribed clients get it over SSE, WebSocket, socket.io and
 * long-polling, and in real Chromium through `@gatehouse/client`. What the events endpoint refuses
 * the flow's task refuses with the same status (SUBMISSION_CHECK=jwt_validation with a source
 * claim, MAX_EVENT_BYTES, MAX_EVENT_KEYS, the gateway's namespace, an invalid event): each case is
 * posted both ways and the statuses compared.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signJwt, withExpiry } from '@gatehouse/auth';
import { LongPollClient, openSse, openWs, uniqueName, waitFor } from '@gatehouse/testkit';
import type { Browser } from 'playwright-core';
import { io } from 'socket.io-client';
import { type BrowserGateway, startBrowserGateway } from '../src/browser-gateway.ts';
import { openClientTab, untilRecord } from '../src/client-tab.ts';
import { flowBridgeApp } from '../src/flow-bridge-app.ts';

const jwtKey = 'flow-bridge-test-secret-of-sufficient-length';
const type = uniqueName('flow.news').replaceAll('-', '.');
const token = (sources: string[]) =>
  `Bearer ${signJwt(withExpiry({ sources }, 600), { alg: 'HS256', key: jwtKey })}`;
const allowed = token(['/shop/*']);
const subs = (list: unknown) => encodeURIComponent(JSON.stringify(list));
let n = 0;
const event = (data: unknown, extra: Record<string, unknown> = {}) => ({
  specversion: '1.0',
  id: `flow-${++n}`,
  type,
  source: '/shop/orders',
  data,
  ...extra,
});

describe('flow → gatehouse.event.publish → frontends', () => {
  let edge: string;
  let setup: BrowserGateway | undefined;
  let pageUrl: string;
  let browser: Browser;

  before(async () => {
    setup = await startBrowserGateway({
      REST_CONFIG_FOLDER: flowBridgeApp(),
      LONGPOLL_TIMEOUT: '1s',
      JWT_SECRET_KEY: jwtKey,
      SUBMISSION_CHECK: 'jwt_validation',
      SUBMISSION_SOURCE_CLAIM: '/sources',
      MAX_EVENT_BYTES: '2048',
      MAX_EVENT_KEYS: '32',
    });
    ({ edge, pageUrl, browser } = setup);
  });
  after(async () => {
    await setup?.stop();
  });

  /** Runs the flow through the public edge (the reverse proxy's route to the REST engine). */
  const viaFlow = (body: unknown, authorization = allowed) =>
    fetch(`${edge}/api/news`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization && { authorization }) },
      body: JSON.stringify(body),
    });
  const viaEndpoint = (body: unknown, authorization = allowed) =>
    fetch(`${edge}/_gw/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization && { authorization }) },
      body: JSON.stringify(body),
    });

  it('delivers the event a flow publishes to SSE, WebSocket, socket.io and long-polling subscribers', async () => {
    const wanted = [{ eventType: type }];
    const sse = await openSse(`${edge}/_gw/v1/connection/sse?subscriptions=${subs(wanted)}`);
    const ws = openWs(`${edge.replace('http', 'ws')}/_gw/v1/connection/ws?subscriptions=${subs(wanted)}`);
    const sio = io(edge, {
      path: '/_gw/v1/socket.io/',
      auth: { subscriptions: wanted },
      transports: ['websocket'],
    });
    const sioEvents: Array<Record<string, unknown>> = [];
    sio.on(type, (e: Record<string, unknown>) => sioEvents.push(e));
    const lp = new LongPollClient(edge);
    await lp.get(`?subscriptions=${subs(wanted)}`);
    try {
      await waitFor(() => sse.frames.length >= 2 && ws.events.length >= 2 && sio.connected);
      const polling = lp.poll();
      const sent = event({ order: 7, status: 'shipped' });
      const res = await viaFlow(sent);
      const answer = (await res.json()) as Record<string, unknown>;
      assert.equal(res.status, 202, JSON.stringify(answer));
      assert.equal(answer['id'], sent.id, 'the flow answers the event as published');
      const ofType = (list: Array<Record<string, unknown>>) => list.filter((e) => e['type'] === type);
      await waitFor(() => sse.events(type).length === 1, { timeoutMs: 15_000 });
      await waitFor(() => ofType(ws.events).length === 1, { timeoutMs: 15_000 });
      await waitFor(() => sioEvents.length === 1, { timeoutMs: 15_000 });
      const polled = ofType(await polling);
      while (polled.length < 1) polled.push(...ofType(await lp.poll()));
      for (const got of [sse.events(type), ofType(ws.events), sioEvents, polled]) {
        assert.equal(got.length, 1);
        assert.equal(got[0]!['id'], sent.id);
        assert.equal(got[0]!['source'], '/shop/orders');
        assert.deepEqual(got[0]!['data'], { order: 7, status: 'shipped' });
      }
    } finally {
      sse.close();
      ws.ws.close();
      sio.close();
    }
  });

  it('refuses what the events endpoint refuses, with the same status', async () => {
    const cases: Array<[string, unknown, string | undefined, number]> = [
      ['no token (SUBMISSION_CHECK)', event({}), '', 403],
      ['a token without the source (SUBMISSION_SOURCE_CLAIM)', event({}), token(['/other/*']), 403],
      ['an invalid token', event({}), 'Bearer not.a.token', 403],
      ['no type', { ...event({}), type: undefined }, allowed, 400],
      ['a bad specversion', event({}, { specversion: '9.9' }), allowed, 400],
      ["the gateway's namespace", event({}, { type: 'gw.presence.join' }), allowed, 400],
      ['a wrapped-source namespace', event({}, { source: 'kafka/orders' }), allowed, 400],
      ['a type read as a pattern', event({}, { type: 'com.example.orders.*' }), allowed, 400],
      ['beyond MAX_EVENT_BYTES', event({ text: 'x'.repeat(3000) }), allowed, 413],
      [
        'beyond MAX_EVENT_KEYS',
        event(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i]))),
        allowed,
        413,
      ],
    ];
    for (const [what, body, authorization, status] of cases) {
      const endpoint = await viaEndpoint(body, authorization);
      await endpoint.arrayBuffer();
      const flow = await viaFlow(body, authorization);
      const answer = (await flow.json()) as Record<string, unknown>;
      assert.equal(endpoint.status, status, `${what}: the events endpoint`);
      assert.equal(flow.status, status, `${what}: the flow (${JSON.stringify(answer)})`);
      assert.equal(answer['status'], status, `${what}: a flow exception`);
    }
  });

  it('reaches @gatehouse/client in Chromium', async () => {
    const tab = await openClientTab(browser, pageUrl, {
      url: edge,
      transports: ['websocket', 'sse'],
      eventType: type,
    });
    try {
      await untilRecord(tab, (r) => r.states.some((s) => s.startsWith('connected:')), 'connected');
      for (const i of [1, 2, 3]) assert.equal((await viaFlow(event({ n: i }))).status, 202);
      const record = await untilRecord(tab, (r) => r.ns.length >= 3, 'three events');
      assert.deepEqual(record.ns, [1, 2, 3]);
    } finally {
      await tab.close();
    }
  });
});
