/**
 * Where a flow's `kafka.notification` / `nats.notification` may publish, attacked from the outside:
 * the publishing app's flows take the topic from the request body, as a flow that builds its topic
 * from request data does. Without a bound, a caller could put a forged event on the fan-out stream
 * the hubs read (past SUBMISSION_CHECK and the `gw` namespace), talk to the gateway's replicas on
 * their `gw.` control subjects, write the schema registry's `_schemas` or Kafka's `__` topics, or
 * call the NATS server's `$JS.API` / `$SYS` subjects. FLOW_NOTIFICATION_TOPICS names the topics
 * flows may publish to (closed when unset), and the gateway's and the brokers' own names are
 * refused whatever it says: 403 before any broker is asked. Real Kafka and NATS, unique names.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dependencyAddress, uniqueName } from '@gatehouse/testkit';
import { type RunningEngine, startEngine } from '../engine-fixture.ts';
import { publishingApp } from './publishing-app.ts';

const run = uniqueName('flow-dest');
const fanout = `${run}.gw-events`;
const forged = { specversion: '1.0', id: 'x', type: 'gw.session_killed', source: 'gatehouse' };

let open: RunningEngine;
let closed: RunningEngine;
let listed: RunningEngine;

const brokers = {
  KAFKA_BROKERS: dependencyAddress.kafkaBrokers.join(','),
  KAFKA_CLIENT_ID: run,
  NATS_SERVERS: dependencyAddress.natsUrl,
  FANOUT_BUS: 'nats',
  FANOUT_TOPIC: fanout,
};

before(async () => {
  const app = publishingApp();
  open = await startEngine({ REST_CONFIG_FOLDER: app, ...brokers, FLOW_NOTIFICATION_TOPICS: '*' });
  closed = await startEngine({ REST_CONFIG_FOLDER: app, ...brokers });
  listed = await startEngine({
    REST_CONFIG_FOLDER: app,
    ...brokers,
    FLOW_NOTIFICATION_TOPICS: `${run}-orders, ${run}.shop.*`,
  });
});
after(async () => {
  await open?.stop();
  await closed?.stop();
  await listed?.stop();
});

const post = (engine: RunningEngine, path: string, body: unknown) =>
  fetch(`${engine.base}/api/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

async function statusOf(engine: RunningEngine, path: string, body: unknown): Promise<[number, string]> {
  const res = await post(engine, path, body);
  return [res.status, await res.text()];
}

async function assertUp(engine: RunningEngine): Promise<void> {
  assert.equal((await fetch(`${engine.base}/health`)).status, 200);
}

describe('the gateway’s and the brokers’ own names, whatever FLOW_NOTIFICATION_TOPICS allows', () => {
  it('refuses the fan-out stream, its routed subjects and the gateway’s gw. subjects (403)', async () => {
    for (const subject of [
      fanout,
      `${fanout}.~t.gw.session_killed`,
      'gw.control.replica-1',
      'gw.events',
      'gw',
    ])
      for (const path of ['nats', 'kafka']) {
        const body = path === 'nats' ? { subject, body: forged } : { topic: subject, body: forged };
        const [status, text] = await statusOf(open, path, body);
        if (path === 'kafka' && subject.includes('~')) assert.equal(status, 400, text);
        else assert.equal(status, 403, `${path} ${subject}: ${text}`);
      }
    await assertUp(open);
  });

  it('refuses the brokers’ and their tools’ own topics and subjects (403)', async () => {
    for (const topic of ['__consumer_offsets', '__transaction_state', '_schemas', '_confluent-metrics'])
      assert.equal((await statusOf(open, 'kafka', { topic, body: 'x' }))[0], 403, topic);
    for (const subject of [
      '$JS.API.STREAM.DELETE.gw_events',
      '$SYS.REQ.SERVER.PING',
      '$KV.x.y',
      '_INBOX.abc',
    ])
      assert.equal((await statusOf(open, 'nats', { subject, body: 'x' }))[0], 403, subject);
    await assertUp(open);
  });
});

describe('FLOW_NOTIFICATION_TOPICS', () => {
  it('unset, lets a flow publish nowhere (403 naming the setting), before any broker is asked', async () => {
    for (const [path, body] of [
      ['kafka', { topic: `${run}-orders`, body: 'x' }],
      ['nats', { subject: `${run}.orders`, body: 'x' }],
    ] as const) {
      const [status, text] = await statusOf(closed, path, body);
      assert.equal(status, 403, text);
      assert.match(text, /FLOW_NOTIFICATION_TOPICS/);
    }
    await assertUp(closed);
  });

  it('allows the topics it names exactly and by prefix, and no other', async () => {
    assert.equal((await statusOf(listed, 'kafka', { topic: `${run}-orders`, body: 'x' }))[0], 200);
    assert.equal((await statusOf(listed, 'nats', { subject: `${run}.shop.one`, body: 'x' }))[0], 200);
    for (const [path, body] of [
      ['kafka', { topic: `${run}-orders2`, body: 'x' }],
      ['kafka', { topic: `${run}-other`, body: 'x' }],
      ['nats', { subject: `${run}.shopx`, body: 'x' }],
      ['nats', { subject: `${run}.orders`, body: 'x' }],
    ] as const)
      assert.equal((await statusOf(listed, path, body))[0], 403, JSON.stringify(body));
  });
});

describe('FLOW_NOTIFICATION_MAX_TOPICS', () => {
  let bounded: RunningEngine;
  before(async () => {
    bounded = await startEngine({
      REST_CONFIG_FOLDER: publishingApp(),
      ...brokers,
      FLOW_NOTIFICATION_TOPICS: `${run}.made.*,${run}.fixed`,
      FLOW_NOTIFICATION_MAX_TOPICS: '2',
    });
  });
  after(() => bounded?.stop());

  it('bounds the topics callers make through a prefix entry (each a new stream on the broker); named ones stay open', async () => {
    const publish = (subject: string) => statusOf(bounded, 'nats', { subject, body: 'x' });
    assert.equal((await publish(`${run}.made.1`))[0], 200);
    assert.equal((await publish(`${run}.made.2`))[0], 200);
    const [status, text] = await publish(`${run}.made.3`);
    assert.equal(status, 403, text);
    assert.match(text, /FLOW_NOTIFICATION_MAX_TOPICS/);
    assert.equal((await publish(`${run}.made.1`))[0], 200, 'a topic already made stays open');
    assert.equal((await publish(`${run}.fixed`))[0], 200, 'a topic named exactly is not counted');
    await assertUp(bounded);
  });
});
