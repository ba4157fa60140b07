/**
 * Requests published as events and correlated responses, through two proxy replicas (processes)
 * against real Kafka, the Kinesis emulator, NATS and Redis: every target with every response_from
 * it supports, correlation ids carried across replicas, forged ids, time-outs.
 * Replica B writes Kafka in binary mode (PROXY_KAFKA_EVENT_MODE=binary), replica A structured.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KafkaBus, KinesisBus, type Message, type Subscription } from '@gatehouse/bus/all';
import { dependencyAddress, sleep, uniqueName, waitFor } from '@gatehouse/testkit';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { type ProxyProcess, startProxy } from './proxy-process.ts';
import { startBackend, type TestBackend } from './test-backend.ts';

const run = uniqueName('proxy-ev');
const requestTopic = `${run}-requests`;
const responseTopic = `${run}-responses`;
const requestStream = `${run}-req`;
const responseStream = `${run}-resp`;
const natsSubject = `${run}.requests`;
const natsRrSubject = `${run}.rr`;

let backend: TestBackend;
let kafka: KafkaBus;
let kinesis: KinesisBus;
let nats: NatsConnection;
let a: ProxyProcess;
let b: ProxyProcess;
const kafkaSeen: Message[] = [];
const kinesisSeen: Message[] = [];
const natsSeen: Array<Record<string, unknown>> = [];
const subscriptions: Subscription[] = [];

function apis() {
  const e = (id: string, path: string, more: Record<string, unknown> = {}) => ({
    id,
    method: 'POST',
    path_regex: path,
    ...more,
  });
  return [
    {
      id: 'events',
      name: 'events',
      version_data: {
        default: {
          endpoints: [
            e('k-pub', '/k/publish', { target: 'kafka', topic: requestTopic }),
            e('k-creds', '/k/credentials', {
              target: 'kafka',
              topic: requestTopic,
              publish_credentials: true,
            }),
            e('k-wait', '/k/wait', { target: 'kafka', topic: requestTopic, response_from: 'kafka' }),
            e('k-short', '/k/short', {
              target: 'kafka',
              topic: requestTopic,
              response_from: 'kafka',
              response_timeout: 700,
            }),
            e('k-async', '/k/async', { target: 'kafka', topic: requestTopic, response_from: 'http_async' }),
            e('ki-pub', '/ki/publish', { target: 'kinesis', topic: requestStream }),
            e('ki-wait', '/ki/wait', {
              target: 'kinesis',
              topic: requestStream,
              response_from: 'kinesis',
              response_timeout: 15000,
            }),
            e('n-pub', '/n/publish', { target: 'nats', topic: natsSubject }),
            e('n-rr', '/n/rr', {
              target: 'nats',
              topic: natsRrSubject,
              response_from: 'nats',
              response_timeout: 800,
            }),
            e('n-none', '/n/none', { target: 'nats', topic: `${run}.nobody`, response_from: 'nats' }),
            e('h-async', '/h/async', { response_from: 'http_async' }),
            e('h-kafka', '/h/kafka', { response_from: 'kafka' }),
            e('h-kinesis', '/h/kinesis', { response_from: 'kinesis', response_timeout: 15000 }),
          ],
        },
      },
      proxy: { target_url: '127.0.0.1', port: backend.port },
    },
  ];
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    // As a page of the allowed origin would: the proxy's own answers carry its CORS headers.
    headers: { 'content-type': 'application/json', origin: 'https://app.example', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const cloudEvent = (extra: Record<string, unknown> = {}) => ({
  specversion: '0.2',
  type: 'order.created',
  source: '/shop',
  id: uniqueName('ev'),
  data: { amount: 3 },
  ...extra,
});

function eventOf(m: Message): Record<string, unknown> {
  return JSON.parse(m.value.toString()) as Record<string, unknown>;
}

async function seenKafka(predicate: (m: Message) => boolean): Promise<Message> {
  return waitFor(() => kafkaSeen.find(predicate), { timeoutMs: 15_000, what: 'a Kafka request message' });
}

/** The correlation id the proxy gave a waiting request, as the backend saw it in the query. */
async function backendCorrelation(path: string): Promise<string> {
  const seen = await waitFor(() => backend.seen.find((s) => s.url.startsWith(`${path}?`)), {
    what: `${path} at the backend`,
  });
  backend.seen.splice(backend.seen.indexOf(seen), 1);
  return new URLSearchParams(seen.url.split('?')[1]).get('correlation')!;
}

describe('proxy events and correlated responses (two replicas, Kafka, Kinesis, NATS, Redis)', () => {
  before(async () => {
    backend = await startBackend();
    backend.handler = (_req, res) => res.writeHead(202).end();
    kafka = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: run });
    await kafka.ensureTopic(requestTopic);
    await kafka.ensureTopic(responseTopic);
    subscriptions.push(await kafka.subscribe(requestTopic, (m) => void kafkaSeen.push(m)));
    // The proxies' region (KINESIS_AWS_REGION's default): the emulator keeps streams per region.
    kinesis = new KinesisBus({
      endpoint: dependencyAddress.kinesisEndpoint,
      region: 'eu-west-1',
      createStreams: true,
      pollIntervalMs: 100,
    });
    subscriptions.push(await kinesis.subscribe(requestStream, (m) => void kinesisSeen.push(m)));
    nats = await connect({ servers: dependencyAddress.natsUrl });
    const sub = nats.subscribe(natsSubject);
    void (async () => {
      for await (const m of sub)
        natsSeen.push(JSON.parse(Buffer.from(m.data).toString()) as Record<string, unknown>);
    })();
    const rr = nats.subscribe(natsRrSubject);
    void (async () => {
      for await (const m of rr) {
        const event = JSON.parse(Buffer.from(m.data).toString()) as { data: { wait?: number; name: string } };
        if (event.data.wait) continue;
        m.respond(JSON.stringify({ hello: event.data.name }));
      }
    })();
    await nats.flush();
    const env = {
      REDIS_URL: dependencyAddress.redisUrl,
      STORE_KEY_PREFIX: `${run}:`,
      KAFKA_BROKERS: dependencyAddress.kafkaBrokers.join(','),
      NATS_SERVERS: dependencyAddress.natsUrl,
      KINESIS_ENDPOINT: dependencyAddress.kinesisEndpoint,
      PROXY_KINESIS_ENABLED: 'true',
      PROXY_KAFKA_RESPONSE_TOPICS: responseTopic,
      PROXY_KINESIS_RESPONSE_STREAMS: responseStream,
      CORS_ALLOWED_ORIGINS: 'https://app.example',
    };
    [a, b] = await Promise.all([
      startProxy({ ...env, PROXY_CONFIG_FILE: JSON.stringify(apis()) }, 60_000),
      startProxy({ ...env, PROXY_KAFKA_EVENT_MODE: 'binary' }, 60_000),
    ]);
    await waitFor(async () => (await fetch(`${b.apiUrl}/v3/apis/events`)).status === 200);
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    for (const s of subscriptions) await s.close();
    await Promise.all([kafka?.close(), kinesis?.close(), nats?.drain(), backend?.close()]);
  });

  it('publishes a CloudEvent body to Kafka with the gw extension, keyed by gw.target_partition', async () => {
    const sent = cloudEvent({ gw: { target_partition: 'customer-7' } });
    const res = await post(`${a.publicUrl}/k/publish?x=1`, sent, {
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    });
    assert.equal(res.status, 202);
    assert.equal(await res.text(), 'Accepted.');
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example');
    const m = await seenKafka((x) => eventOf(x).id === sent.id);
    assert.equal(m.key, 'customer-7');
    assert.match(m.headers['content-type']!, /^application\/cloudevents\+json/);
    const event = eventOf(m);
    assert.equal(event.type, 'order.created');
    assert.deepEqual(event.data, { amount: 3 });
    const gw = event.gw as Record<string, unknown>;
    assert.equal(gw.target_partition, 'customer-7');
    assert.equal(gw.path, '/k/publish');
    assert.equal(gw.query, 'x=1');
    assert.equal(gw.method, 'POST');
    assert.equal(gw.remoteIp, '127.0.0.1');
    assert.equal((gw.headers as Record<string, string>)['content-type'], 'application/json');
    assert.equal(gw.correlation, undefined, 'nothing is awaited, so no correlation id');
    assert.match(String(event.traceparent), /^00-4bf92f3577b34da6a3ce929d0e0e4736-/);
  });

  it('leaves Authorization, Cookie and Proxy-Authorization out of gw.headers on every target unless the endpoint asks', async () => {
    const credentials = {
      authorization: 'Bearer secret-jwt',
      cookie: 'session=secret-cookie',
      'proxy-authorization': 'Basic c2VjcmV0',
      'x-request-tag': 'kept',
    };
    const headersOf = (event: Record<string, unknown>) =>
      (event.gw as { headers: Record<string, string> }).headers;
    const [k, ki, n, kept] = [cloudEvent(), cloudEvent(), cloudEvent(), cloudEvent()];
    for (const [path, sent] of [
      ['/k/publish', k],
      ['/ki/publish', ki],
      ['/n/publish', n],
      ['/k/credentials', kept],
    ] as const)
      assert.equal((await post(`${a.publicUrl}${path}`, sent, credentials)).status, 202, path);
    const published = [
      eventOf(await seenKafka((x) => eventOf(x).id === k.id)),
      eventOf(await waitFor(() => kinesisSeen.find((x) => eventOf(x).id === ki.id), { timeoutMs: 15_000 })),
      await waitFor(() => natsSeen.find((e) => e.id === n.id)),
    ];
    for (const event of published) {
      const headers = headersOf(event);
      assert.equal(headers['x-request-tag'], 'kept');
      for (const name of ['authorization', 'cookie', 'proxy-authorization'])
        assert.equal(headers[name], undefined, `${name} published: ${JSON.stringify(headers)}`);
    }
    const asked = headersOf(eventOf(await seenKafka((x) => eventOf(x).id === kept.id)));
    assert.equal(asked['authorization'], 'Bearer secret-jwt');
    assert.equal(asked['cookie'], 'session=secret-cookie');
  });

  it('wraps a body that is not a CloudEvent instead of refusing it, and refuses an invalid CloudEvent', async () => {
    const res = await post(`${a.publicUrl}/k/publish`, { order: 'plain-json' });
    assert.equal(res.status, 202);
    const wrapped = eventOf(
      await seenKafka((x) => (eventOf(x).data as { order?: string })?.order === 'plain-json'),
    );
    assert.equal(wrapped.specversion, '0.2');
    assert.equal(wrapped.type, 'proxy.request');
    const text = await fetch(`${a.publicUrl}/k/publish`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello there',
    });
    assert.equal(text.status, 202);
    await seenKafka((x) => eventOf(x).data === 'hello there');
    const legacy = await post(`${a.publicUrl}/k/publish`, {
      partition: 'p-legacy',
      event: cloudEvent({ id: 'legacy-1' }),
    });
    assert.equal(legacy.status, 202);
    assert.equal((await seenKafka((x) => eventOf(x).id === 'legacy-1')).key, 'p-legacy');
    const invalid = await post(`${a.publicUrl}/k/publish`, { specversion: '0.2', source: '/x' });
    assert.equal(invalid.status, 400);
    assert.match(await invalid.text(), /^Bad request: invalid CloudEvent/);
    const notJson = await post(`${a.publicUrl}/k/publish`, '{nope');
    assert.equal(notJson.status, 400);
  });

  it('refuses a body nested deeper than MAX_JSON_DEPTH with 400 naming it, on every target, publishing nothing', async () => {
    const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const marker = uniqueName('deep');
    // A plain JSON body becomes the data of the event: it may nest 127 levels under the default 128.
    const within = await post(`${a.publicUrl}/k/publish`, `{"marker":"${marker}","v":${nested(126)}}`);
    assert.equal(within.status, 202);
    await seenKafka((x) => (eventOf(x).data as { marker?: string })?.marker === marker);
    // 10,000 levels: deeper than JSON.stringify goes, as a plain body and as a CloudEvent's data.
    const bodies = [
      `{"marker":"${marker}-deep","v":${nested(10_000)}}`,
      JSON.stringify(cloudEvent({ data: { marker: `${marker}-deep` } })).replace(
        /"data":\{/,
        `"data":{"v":${nested(10_000)},`,
      ),
    ];
    for (const path of ['/k/publish', '/ki/publish', '/n/publish', '/n/rr'])
      for (const body of bodies) {
        const res = await post(`${a.publicUrl}${path}`, body);
        assert.equal(res.status, 400, path);
        assert.match(
          await res.text(),
          /^Bad request: the event nests objects and arrays deeper than MAX_JSON_DEPTH \(128\) levels/,
        );
      }
    await sleep(500);
    const deep = (data: unknown) => (data as { marker?: string } | undefined)?.marker === `${marker}-deep`;
    assert.equal(kafkaSeen.filter((m) => deep(eventOf(m).data)).length, 0);
    assert.equal(kinesisSeen.filter((m) => deep(eventOf(m).data)).length, 0);
    assert.equal(natsSeen.filter((e) => deep(e['data'])).length, 0);
  });

  it('writes binary mode with ce_ headers when configured (replica B)', async () => {
    const sent = cloudEvent({ gw: { target_partition: 'bin-1' } });
    assert.equal((await post(`${b.publicUrl}/k/publish`, sent)).status, 202);
    const m = await seenKafka((x) => x.headers['ce_id'] === sent.id);
    assert.equal(m.headers['ce_specversion'], '0.2');
    assert.equal(m.headers['ce_type'], 'order.created');
    assert.equal(m.key, 'bin-1');
    assert.deepEqual(JSON.parse(m.value.toString()), { amount: 3 });
  });

  it('answers CORS preflights of event endpoints: credentials only for an allowed origin', async () => {
    const preflight = (origin: string) =>
      fetch(`${a.publicUrl}/k/publish`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
    const res = await preflight('https://app.example');
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example');
    assert.equal(res.headers.get('access-control-allow-credentials'), 'true');
    assert.equal(res.headers.get('access-control-allow-headers'), 'content-type, authorization');
    assert.match(res.headers.get('access-control-allow-methods') ?? '', /\bPOST\b/);
    assert.equal(res.headers.get('vary'), 'Origin');
    const other = await preflight('https://evil.example');
    assert.equal(other.headers.get('access-control-allow-origin'), null);
    assert.equal(other.headers.get('access-control-allow-credentials'), null);
  });

  it('kafka → response_from kafka: the client gets the response message body and code', async () => {
    const sent = cloudEvent();
    const pending = post(`${a.publicUrl}/k/wait`, sent);
    const request = eventOf(await seenKafka((x) => eventOf(x).id === sent.id));
    const correlation = (request.gw as { correlation: string }).correlation;
    assert.ok(correlation);
    await kafka.publish(responseTopic, {
      value: JSON.stringify({ reserved: true }),
      headers: {
        'gw-correlation': correlation,
        'gw-response-code': '201',
        'content-type': 'application/json',
        'x-extra': 'e',
      },
    });
    const res = await pending;
    assert.equal(res.status, 201);
    assert.deepEqual(await res.json(), { reserved: true });
    assert.equal(res.headers.get('content-type'), 'application/json');
    // The specification: the client receives the message body without the message's headers (RIG
    // 3.0 copied them all).
    assert.equal(res.headers.get('x-extra'), null);
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example');
  });

  it('times out with 504 when no (valid) response comes', async () => {
    const sent = cloudEvent();
    const pending = post(`${b.publicUrl}/k/short`, sent);
    const m = await seenKafka((x) => x.headers['ce_id'] === sent.id);
    await kafka.publish(responseTopic, {
      value: 'ignored',
      headers: { 'gw-correlation': m.headers['ce_gw'] ?? 'x', 'gw-response-code': 'abc201' },
    });
    const res = await pending;
    assert.equal(res.status, 504);
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example');
  });

  it('http → response_from http_async: /v3/responses on the other replica completes the request', async () => {
    const pending = post(`${a.publicUrl}/h/async`, { order: 1 });
    const correlation = await backendCorrelation('/h/async');
    const answer = await fetch(`${b.apiUrl}/v3/responses`, {
      method: 'POST',
      headers: {
        'gw-correlation': correlation,
        'gw-response-code': '200',
        'content-type': 'application/json;charset=utf-8',
        'x-order': '1',
      },
      body: JSON.stringify({ message: 'this is the async response' }),
    });
    assert.equal(answer.status, 202);
    const res = await pending;
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { message: 'this is the async response' });
    assert.equal(res.headers.get('x-order'), '1');
    assert.equal(res.headers.get('user-agent'), null, 'request-only headers of the POST are not passed on');
    const again = await fetch(`${b.apiUrl}/v3/responses`, {
      method: 'POST',
      headers: { 'gw-correlation': correlation },
      body: 'late',
    });
    assert.equal(again.status, 404);
  });

  it('refuses forged and altered correlation ids', async () => {
    const pending = post(`${a.publicUrl}/h/async`, { order: 2 });
    const correlation = await backendCorrelation('/h/async');
    const altered = correlation.slice(0, -2) + (correlation.at(-2) === 'A' ? 'B' : 'A') + correlation.at(-1);
    for (const id of ['forged-id', altered]) {
      const res = await fetch(`${b.apiUrl}/v3/responses`, {
        method: 'POST',
        headers: { 'gw-correlation': id },
        body: 'x',
      });
      assert.equal(res.status, 400);
    }
    // A 1xx is not a final answer: relayed as one, the client's request would never complete.
    for (const code of ['abc201', '100', '101', '199']) {
      const badCode = await fetch(`${b.apiUrl}/v3/responses`, {
        method: 'POST',
        headers: { 'gw-correlation': correlation, 'gw-response-code': code },
        body: 'x',
      });
      assert.equal(badCode.status, 400, code);
      assert.match(await badCode.text(), /gw-response-code must be an integer from 200 to 599/);
    }
    const informational = await post(`${a.apiUrl}/v1/responses`, {
      specversion: '1.0',
      type: 'order.done',
      source: '/backend',
      id: 'r0',
      gw: { correlation, responseCode: 103 },
    });
    assert.equal(informational.status, 400);
    assert.match(await informational.text(), /gw\.responseCode must be an integer from 200 to 599, got 103/);
    const ok = await fetch(`${a.apiUrl}/v3/responses`, {
      method: 'POST',
      headers: { 'gw-correlation': correlation, 'gw-response-code': '409' },
      body: 'conflict',
    });
    assert.equal(ok.status, 202);
    const res = await pending;
    assert.equal(res.status, 409);
    assert.equal(await res.text(), 'conflict');
  });

  it('accepts the CloudEvent form on /v1/responses, and passes a non-202 target answer straight on', async () => {
    const pending = post(`${b.publicUrl}/h/async`, { order: 3 });
    const correlation = await backendCorrelation('/h/async');
    const answer = await post(`${a.apiUrl}/v1/responses`, {
      specversion: '0.2',
      type: 'order.done',
      source: '/backend',
      id: 'r1',
      contenttype: 'application/json',
      gw: { correlation, responseCode: 201 },
      data: { done: true },
    });
    assert.equal(answer.status, 202);
    const res = await pending;
    assert.equal(res.status, 201);
    assert.deepEqual(await res.json(), { done: true });

    backend.handler = (_req, res2) => res2.writeHead(200, { 'content-type': 'text/plain' }).end('cached');
    try {
      const direct = await post(`${a.publicUrl}/h/async`, {});
      assert.equal(direct.status, 200);
      assert.equal(await direct.text(), 'cached');
    } finally {
      backend.handler = (_req, res2) => res2.writeHead(202).end();
    }
  });

  it('takes the response code in the payload on /v3/responses too: a structured CloudEvent', async () => {
    // The cached answer of the test before left its request at the backend: not this one's.
    for (const seen of backend.seen.filter((x) => x.url.startsWith('/h/async?')))
      backend.seen.splice(backend.seen.indexOf(seen), 1);
    const pending = post(`${a.publicUrl}/h/async`, { order: 4 });
    const correlation = await backendCorrelation('/h/async');
    const refused = await fetch(`${b.apiUrl}/v3/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/cloudevents+json' },
      body: JSON.stringify({
        specversion: '1.0',
        type: 'order.done',
        source: '/backend',
        id: 'r4',
        gw: { correlation, responseCode: 100 },
      }),
    });
    assert.equal(refused.status, 400);
    assert.match(await refused.text(), /gw\.responseCode must be an integer from 200 to 599, got 100/);
    const answer = await fetch(`${b.apiUrl}/v3/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/cloudevents+json; charset=utf-8' },
      body: JSON.stringify({
        specversion: '1.0',
        type: 'order.done',
        source: '/backend',
        id: 'r5',
        datacontenttype: 'application/json',
        gw: { correlation, responseCode: 201 },
        data: { created: 4 },
      }),
    });
    assert.equal(answer.status, 202);
    const res = await pending;
    assert.equal(res.status, 201);
    assert.deepEqual(await res.json(), { created: 4 });
  });

  it('kafka → response_from http_async and http → response_from kafka', async () => {
    const sent = cloudEvent();
    const first = post(`${b.publicUrl}/k/async`, sent);
    const m = await seenKafka((x) => x.headers['ce_id'] === sent.id);
    const correlation = (JSON.parse(m.headers['ce_gw']!) as { correlation: string }).correlation;
    assert.equal(
      (
        await fetch(`${a.apiUrl}/v3/responses`, {
          method: 'POST',
          headers: { 'gw-correlation': correlation },
          body: 'via http',
        })
      ).status,
      202,
    );
    assert.equal(await (await first).text(), 'via http');

    const second = post(`${a.publicUrl}/h/kafka`, {});
    const correlation2 = await backendCorrelation('/h/kafka');
    await kafka.publish(responseTopic, {
      value: 'via kafka',
      headers: {
        'gw-correlation': correlation2,
        'gw-response-code': '201',
        'content-type': 'text/plain; charset=utf-8',
        'x-backend-internal': 'secret-route',
      },
    });
    const res = await second;
    assert.equal(res.status, 201);
    assert.equal(await res.text(), 'via kafka');
    // The spec: the client receives the message body without the message's headers; its content
    // type alone says how to read the body.
    assert.equal(res.headers.get('x-backend-internal'), null);
    assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
  });

  it('publishes to Kinesis keyed by gw.target_partition', async () => {
    const sent = cloudEvent({ gw: { target_partition: 'shard-key-1' } });
    assert.equal((await post(`${a.publicUrl}/ki/publish`, sent)).status, 202);
    const m = await waitFor(() => kinesisSeen.find((x) => eventOf(x).id === sent.id), { timeoutMs: 15_000 });
    assert.equal(m.key, 'shard-key-1');
    assert.equal((eventOf(m).gw as { path: string }).path, '/ki/publish');
  });

  it('kinesis → response_from kinesis and http → response_from kinesis', async () => {
    const sent = cloudEvent();
    const pending = post(`${b.publicUrl}/ki/wait`, sent);
    const m = await waitFor(() => kinesisSeen.find((x) => eventOf(x).id === sent.id), { timeoutMs: 15_000 });
    const correlation = (eventOf(m).gw as { correlation: string }).correlation;
    const response = (c: string, data: unknown) =>
      kinesis.publish(responseStream, {
        value: JSON.stringify({
          specversion: '1.0',
          type: 'resp',
          source: '/k',
          id: uniqueName('r'),
          datacontenttype: 'application/json',
          gw: { correlation: c, responseCode: 200 },
          data,
        }),
      });
    await response(correlation, { via: 'kinesis' });
    const res = await pending;
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { via: 'kinesis' });

    const second = post(`${a.publicUrl}/h/kinesis`, {});
    await response(await backendCorrelation('/h/kinesis'), { via: 'kinesis after http' });
    assert.deepEqual(await (await second).json(), { via: 'kinesis after http' });
  });

  it('publishes to NATS, and request/reply answers with the reply', async () => {
    const sent = cloudEvent();
    assert.equal((await post(`${a.publicUrl}/n/publish`, sent)).status, 202);
    const event = await waitFor(() => natsSeen.find((e) => e.id === sent.id));
    assert.equal((event.gw as { path: string }).path, '/n/publish');

    const res = await post(`${b.publicUrl}/n/rr`, { name: 'nats' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.deepEqual(await res.json(), { hello: 'nats' });
    const slow = await post(`${b.publicUrl}/n/rr`, { name: 'x', wait: 1 });
    assert.equal(slow.status, 504);
    const none = await post(`${a.publicUrl}/n/none`, {});
    assert.equal(none.status, 502);
  });

  it('counts produced events and correlated responses', async () => {
    const metrics = await (await fetch(`${a.apiUrl}/metrics`)).text();
    assert.match(
      metrics,
      new RegExp(`gw_produced_events_total\\{target="kafka",topic="${requestTopic}"[^}]*\\} [1-9]`),
    );
    assert.match(
      metrics,
      /gw_proxy_correlated_responses_total\{source="kafka",result="delivered"[^}]*\} [1-9]/,
    );
    assert.match(
      metrics,
      /gw_proxy_requests_total\{method="POST",path_regex="\/k\/wait",target="kafka",response_from="kafka",status="ok"/,
    );
  });
});
