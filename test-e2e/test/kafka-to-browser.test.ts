/**
 * The example examples/kafka-to-browser, its files unchanged, from the outside: order records
 * produced to a real Kafka topic run the example's flow, which enriches each through the REST call
 * GET /api/customers/{id} and publishes it with gatehouse.event.publish; `@gatehouse/client` in
 * Chromium and an SSE client on the public edge each get every enriched order exactly once (none
 * lost, none doubled). The run's own topic comes in through ORDERS_TOPIC, which the example's
 * kafka-flow-adapter.yaml reads; CUSTOMER_API_URL points the lookup at the engine's ephemeral port.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { KafkaBus } from '@gatehouse/bus/kafka';
import type { EmbeddedGateway } from '@gatehouse/embedded';
import { dependencyAddress, openSse, uniqueName, waitFor } from '@gatehouse/testkit';
import type { Browser } from 'playwright-core';
import { type BrowserGateway, startBrowserGateway } from '../src/browser-gateway.ts';
import { openClientTab, untilRecord } from '../src/client-tab.ts';

const example = fileURLToPath(new URL('../../examples/kafka-to-browser/', import.meta.url));
const topic = uniqueName('orders.created');
const eventType = 'order.created';
const subs = encodeURIComponent(JSON.stringify([{ eventType }]));
const orders = [
  { id: `${topic}-1`, customer: 'c-1', total: 42.5 },
  { id: `${topic}-2`, customer: 'c-2', total: 7 },
  { id: `${topic}-3`, customer: 'c-unknown', total: 1 },
  { id: `${topic}-4`, customer: 'c-3', total: 99.9 },
  { id: `${topic}-5`, customer: 'c-1', total: 3.25 },
];
/**
 * Produced after the orders, in the same (single) partition: the adapter runs a partition's records
 * in order and the stream keeps a connection's order, so once the last one arrived, a doubled
 * order would have arrived before it.
 */
const last = { id: `${topic}-last`, customer: 'c-2', total: 0 };

describe('examples/kafka-to-browser: Kafka record → flow → REST call → browsers', () => {
  let gateway: EmbeddedGateway;
  let edge: string;
  let setup: BrowserGateway | undefined;
  let pageUrl: string;
  let browser: Browser;
  let kafka: KafkaBus;
  const customerApiBefore = process.env['CUSTOMER_API_URL'];

  before(async () => {
    kafka = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: 'kafka-to-browser-test' });
    await kafka.ensureTopic(topic, 1);
    setup = await startBrowserGateway({
      REST_CONFIG_FOLDER: example,
      ORDERS_TOPIC: topic,
      KAFKA_BROKERS: dependencyAddress.kafkaBrokers.join(','),
      KAFKA_FLOW_METADATA_REFRESH_MS: '300',
    });
    ({ gateway, edge, pageUrl, browser } = setup);
    process.env['CUSTOMER_API_URL'] = `http://127.0.0.1:${gateway.restPort}/api/customers`;
  });
  after(async () => {
    await setup?.stop();
    await kafka?.close();
    if (customerApiBefore === undefined) delete process.env['CUSTOMER_API_URL'];
    else process.env['CUSTOMER_API_URL'] = customerApiBefore;
  });

  it('delivers each record, enriched with its customer, exactly once to Chromium and to SSE', async () => {
    const sse = await openSse(`${edge}/_gw/v1/connection/sse?subscriptions=${subs}`);
    const tab = await openClientTab(browser, pageUrl, {
      url: edge,
      transports: ['websocket', 'sse'],
      eventType,
    });
    try {
      await untilRecord(tab, (r) => r.states.some((s) => s.startsWith('connected:')), 'connected');
      await waitFor(() => sse.frames.length >= 2, { what: 'the SSE stream open' });
      for (const order of [...orders, last])
        await kafka.publish(topic, { key: order.customer, value: JSON.stringify(order) });

      const ids = [...orders, last].map((o) => o.id);
      const record = await untilRecord(tab, (r) => r.ids.includes(last.id), 'the last order in Chromium');
      await waitFor(() => sse.events(eventType).some((e) => e['id'] === last.id), {
        timeoutMs: 30_000,
        what: 'the last order over SSE',
      });
      assert.deepEqual(record.ids, ids, 'Chromium: each order once, in order');
      const events = sse.events(eventType);
      assert.deepEqual(
        events.map((e) => e['id']),
        ids,
        'SSE: each order once, in order',
      );

      const byId = new Map(events.map((e) => [e['id'], e['data'] as Record<string, unknown>]));
      assert.deepEqual(byId.get(`${topic}-1`), {
        order: orders[0],
        customer: { id: 'c-1', name: 'Ada Lovelace', tier: 'gold', city: 'London', known: true },
      });
      assert.deepEqual(byId.get(`${topic}-3`), {
        order: orders[2],
        customer: { id: 'c-unknown', known: false },
      });
      assert.equal(events[0]!['source'], '/shop/orders');
    } finally {
      sse.close();
      await tab.close();
    }
  });
});
