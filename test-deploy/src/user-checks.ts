/**
 * What a user of a deployed Gatehouse does, checked from outside through its public surface, its
 * internal API and the REST engine, by base URL only: the same checks serve docker-compose and a
 * Helm release. Each check makes its own names (event types, API ids, topics, sessions), so checks
 * can run against a long-lived deployment, and removes the API definitions it registers.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { SignedTokenCodec, signJwt } from '@gatehouse/auth';
import { openSse, openWs, type SseConnection, sleep, uniqueName, waitFor } from '@gatehouse/testkit';
import { Kafka, type KafkaConfig, logLevel } from 'kafkajs';
import { connect, type WatchedConnection } from '../../services/blacklist/test/transport-clients.ts';

export interface GatehouseUrls {
  /** The public surface (the edge): connections, events, proxied APIs. */
  publicUrl: string;
  /** The internal API (the edge's internal port): API definitions, responses, the blacklist. */
  internalUrl: string;
  /** The REST engine. */
  restUrl: string;
  /** INTERNAL_API_TOKEN, when the deployment asks for one on the internal API (both deployments do). */
  internalToken?: string | undefined;
  /**
   * A user's JWT (userJwt): the deployments start closed, SUBMISSION_CHECK and SUBSCRIPTION_CHECK
   * jwt_validation, so posting events and subscribing take one.
   */
  userJwt: string;
}

/**
 * The iss and aud of the test deployments' tokens, which they are told to accept (compose's
 * JWT_ISSUER and JWT_AUDIENCE, the chart's auth.jwtIssuer and auth.jwtAudience).
 */
export const deploymentIssuer = 'https://issuer.test-deploy.example/';
export const deploymentAudience = 'gatehouse-test-deploy';

/** The Authorization header the deployment's internal API asks for, if any. */
function internalAuth(urls: GatehouseUrls): Record<string, string> {
  return urls.internalToken === undefined ? {} : { authorization: `Bearer ${urls.internalToken}` };
}

const delivery = { timeoutMs: 20_000 };
const subscriptions = (eventType: string) => encodeURIComponent(JSON.stringify([{ eventType }]));
/** The query of a connection that subscribes to `eventType` as the deployment's user. */
const subscribing = (urls: GatehouseUrls, eventType: string) =>
  `subscriptions=${subscriptions(eventType)}&jwt=${urls.userJwt}`;

async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

function cloudEvent(type: string, data: unknown) {
  return { specversion: '1.0', id: uniqueName('ev'), source: 'test-deploy', type, data };
}

/**
 * Posts a CloudEvent to the public /_gw/v1/events as the user; the publisher accepts it with 202.
 * A 503 (the gateway's broker not reachable yet, seen once for 23 s just after a compose stack was
 * healthy) is retried after its Retry-After for up to a minute, as a client of the gateway should.
 */
export async function publishEvent(urls: GatehouseUrls, type: string, data: unknown): Promise<string> {
  const event = cloudEvent(type, data);
  const deadline = Date.now() + 60_000;
  let res = await postEvent(urls, event, urls.userJwt);
  while (res.status === 503 && Date.now() < deadline) {
    await res.body?.cancel();
    await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
    res = await postEvent(urls, event, urls.userJwt);
  }
  assert.equal(res.status, 202, await res.text());
  return event.id;
}

function postEvent(urls: GatehouseUrls, event: unknown, jwt: string | undefined): Promise<Response> {
  return fetch(`${urls.publicUrl}/_gw/v1/events`, {
    method: 'POST',
    headers: {
      'content-type': 'application/cloudevents+json',
      ...(jwt !== undefined && { authorization: `Bearer ${jwt}` }),
    },
    body: JSON.stringify(event),
  });
}

/**
 * The deployment starts closed: without a token nobody may post an event to every browser or
 * subscribe to an event type (403), nor with a token of another issuer.
 */
export async function checkClosedByDefault(urls: GatehouseUrls, jwtSecretKey: string): Promise<void> {
  const type = uniqueName('deploy.closed');
  const foreign = sessionJwt(jwtSecretKey, { iss: 'https://someone-else.example/' }).jwt;
  for (const jwt of [undefined, foreign]) {
    const posted = await postEvent(urls, cloudEvent(type, { closed: true }), jwt);
    assert.equal(posted.status, 403, await posted.text());
    const query = `subscriptions=${subscriptions(type)}${jwt === undefined ? '' : `&jwt=${jwt}`}`;
    const sse = await openSse(`${urls.publicUrl}/_gw/v1/connection/sse?${query}`);
    sse.close();
    assert.notEqual(
      sse.status,
      200,
      `a subscription ${jwt === undefined ? 'without a token' : 'of another issuer'}`,
    );
  }
}

/** An SSE and a WebSocket client subscribed to a fresh event type both receive an event posted to the edge. */
export async function checkEventDelivery(urls: GatehouseUrls): Promise<void> {
  const type = uniqueName('deploy.greeting');
  const sse = await openSse(`${urls.publicUrl}/_gw/v1/connection/sse?${subscribing(urls, type)}`);
  const ws = openWs(
    `${urls.publicUrl.replace(/^http/, 'ws')}/_gw/v1/connection/ws?${subscribing(urls, type)}`,
  );
  try {
    assert.equal(sse.status, 200, sse.errorBody);
    await waitFor(() => sse.events('gw.subscriptions_set').length === 1, { what: 'the SSE subscription' });
    await waitFor(() => ws.events.some((e) => e['type'] === 'gw.subscriptions_set'), {
      what: 'the WebSocket subscription',
    });
    const id = await publishEvent(urls, type, { hello: 'deployed' });
    await waitFor(() => sse.events(type).some((e) => e['id'] === id), {
      ...delivery,
      what: 'the event over SSE',
    });
    await waitFor(() => ws.events.some((e) => e['type'] === type && e['id'] === id), {
      ...delivery,
      what: 'the event over WebSocket',
    });
    assert.deepEqual(sse.events(type)[0]!['data'], { hello: 'deployed' });
  } finally {
    sse.close();
    ws.ws.close();
  }
}

/**
 * The internal API asks for the deployment's INTERNAL_API_TOKEN: refused without it or with another
 * one, served with it; the readiness probe stays open and tells an anonymous caller only `ready`.
 */
export async function checkInternalApiToken(urls: GatehouseUrls): Promise<void> {
  assert.ok(urls.internalToken, 'the deployment has an internal API token');
  const apis = `${urls.internalUrl}/v3/apis`;
  for (const headers of [{}, { authorization: 'Bearer another-token-of-the-same-kind' }]) {
    const refused = await fetch(apis, { headers });
    assert.equal(refused.status, 401, await refused.text());
    assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="gatehouse-internal"');
  }
  const served = await fetch(apis, { headers: internalAuth(urls) });
  assert.equal(served.status, 200, await served.text());
  // Open without the token. Asked until ready: a readiness check may time out now and then (2 s)
  // on a box this loaded, as a probe's failure threshold allows; that is not what is checked here.
  let ready = await fetch(`${urls.internalUrl}/_services/proxy/ready`);
  for (const deadline = Date.now() + 60_000; ready.status === 503 && Date.now() < deadline; ) {
    await sleep(1000);
    ready = await fetch(`${urls.internalUrl}/_services/proxy/ready`);
  }
  assert.equal(ready.status, 200);
  assert.deepEqual(await ready.json(), { ready: true });
}

/**
 * The edge's internal API answers only to the names it is reached by: a page whose own name was
 * made to resolve to it (DNS rebinding) sends that name as Host and gets 421, even with the token.
 */
export async function checkInternalApiHost(urls: GatehouseUrls): Promise<void> {
  const { port } = new URL(urls.internalUrl);
  const answer = (host: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request(`${urls.internalUrl}/v3/apis`, { headers: { host, ...internalAuth(urls) } });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end();
    });
  assert.equal(await answer(`rebound.attacker.example:${port}`), 421);
  assert.equal(await answer(`localhost:${port}`), 200);
  assert.equal(await answer(`127.0.0.1:${port}`), 200);
}

/** Registers an API definition through the internal API; returns a function that deletes it again. */
export async function registerApi(
  urls: GatehouseUrls,
  api: Record<string, unknown>,
): Promise<() => Promise<void>> {
  const res = await postJson(`${urls.internalUrl}/v3/apis`, api, internalAuth(urls));
  assert.equal(res.status, 201, await res.text());
  return async () => {
    const gone = await fetch(`${urls.internalUrl}/v3/apis/${String(api['id'])}`, {
      method: 'DELETE',
      headers: internalAuth(urls),
    });
    assert.equal(gone.status, 204, await gone.text());
  };
}

/**
 * A request to the public surface reaches an HTTP backend through an API definition registered on
 * the internal API: here the REST engine's hello endpoint, addressed as the proxies reach it
 * (`backend`, e.g. the compose service name or the Kubernetes Service and its port).
 */
export async function checkProxiedHttp(urls: GatehouseUrls, backend: { host: string; port: number }) {
  const id = uniqueName('deploy-http');
  const unregister = await registerApi(urls, {
    id,
    name: id,
    version_data: {
      default: {
        endpoints: [
          { id: 'hello', method: 'GET', path_regex: `/${id}/hello`, path_replacement: '/api/hello/world' },
        ],
      },
    },
    proxy: { target_url: `http://${backend.host}`, port: backend.port },
  });
  try {
    // Every proxy replica applies the definition on the store's notification; several requests
    // reach several replicas.
    for (let i = 0; i < 4; i++) {
      const res = await waitFor(
        async () => {
          const r = await fetch(`${urls.publicUrl}/${id}/hello`);
          // 502: the backend not reachable from a proxy replica yet (seen just after a compose
          // stack was healthy, while its network settled: each replica resolves and connects on
          // its own, so the second request, on the other replica, met it too); the last answer
          // is still asserted.
          return r.status === 404 || r.status === 502 ? undefined : r;
        },
        { timeoutMs: 60_000, what: 'the API definition on every proxy replica, and its backend' },
      );
      assert.equal(res.status, 200, await res.clone().text());
      assert.deepEqual(await res.json(), { hello: 'world' });
    }
  } finally {
    await unregister();
  }
}

/**
 * A request published to Kafka and answered over Kafka: the check is the backend. It consumes the
 * request topic through `brokers` (a listener reachable from where the check runs), reads the
 * correlation id the proxy put in the CloudEvent's `gw` extension, and produces the response with
 * it (headers gw-correlation, gw-response-code) to the proxy's response topic.
 */
export async function checkKafkaRoundTrip(
  urls: GatehouseUrls,
  brokers: string[],
  responseTopic = 'gw-proxy-response',
): Promise<void> {
  const id = uniqueName('deploy-kafka');
  const requestTopic = `${id}-requests`;
  const kafka = new Kafka({ clientId: id, brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  const producer = kafka.producer();
  const consumer = kafka.consumer({ groupId: id });
  const unregister = await registerApi(urls, {
    id,
    name: id,
    version_data: {
      default: {
        endpoints: [
          {
            id: 'ask',
            method: 'POST',
            path_regex: `/${id}/ask`,
            target: 'kafka',
            topic: requestTopic,
            response_from: 'kafka',
            response_timeout: 30_000,
          },
        ],
      },
    },
  });
  try {
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: requestTopic, numPartitions: 1 }], waitForLeaders: true });
    await Promise.all([producer.connect(), consumer.connect()]);
    await consumer.subscribe({ topic: requestTopic, fromBeginning: true });
    const seen: Array<Record<string, unknown>> = [];
    let joined = false;
    consumer.on(consumer.events.GROUP_JOIN, () => {
      joined = true;
    });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const request = JSON.parse(message.value!.toString()) as Record<string, unknown>;
        seen.push(request);
        const gw = request['gw'] as { correlation: string };
        await producer.send({
          topic: responseTopic,
          messages: [
            {
              value: JSON.stringify({ answeredBy: 'kafka backend', question: request['data'] }),
              headers: {
                'gw-correlation': gw.correlation,
                'gw-response-code': '201',
                'content-type': 'application/json',
              },
            },
          ],
        });
      },
    });
    await waitFor(() => joined, { timeoutMs: 30_000, what: 'the Kafka consumer group' });

    const res = await postJson(`${urls.publicUrl}/${id}/ask`, { question: 'ping' });
    const body = await res.text();
    assert.equal(res.status, 201, body);
    assert.deepEqual(JSON.parse(body), { answeredBy: 'kafka backend', question: { question: 'ping' } });
    assert.equal(seen.length, 1, 'one request on the topic');
    assert.equal((seen[0]!['gw'] as { method: string }).method, 'POST');
  } finally {
    await consumer.disconnect().catch(() => {});
    await producer.disconnect().catch(() => {});
    await admin.deleteTopics({ topics: [requestTopic] }).catch(() => {});
    await admin.disconnect().catch(() => {});
    await unregister();
  }
}

/**
 * Avro through a Confluent-compatible schema registry: a schema registered on the registry's API
 * (`registryUrl`, as the check reaches it) and an API definition whose Kafka endpoint writes to the
 * publisher's source topic with that subject as its `schema`. A CloudEvent posted to it reaches an
 * SSE client as JSON (proxy: Avro through the registry; publisher: decoded by schema id; hub), data
 * that does not fit the schema is answered 400, and on the broker (`kafka`: how the check reaches
 * the deployment's Kafka) the record is in binary mode, its value the Confluent wire format under
 * the registered schema's id.
 */
export async function checkAvroThroughRegistry(
  urls: GatehouseUrls,
  registryUrl: string,
  kafka: Pick<KafkaConfig, 'brokers' | 'ssl' | 'sasl'>,
  sourceTopic = 'gw',
): Promise<void> {
  const id = uniqueName('deploy-avro');
  const type = uniqueName('deploy.order');
  const subject = `${id}-value`;
  const schema = {
    type: 'record',
    name: 'Order',
    fields: [
      { name: 'item', type: 'string' },
      { name: 'qty', type: 'int' },
    ],
  };
  const registered = await fetch(`${registryUrl}/subjects/${subject}/versions`, {
    method: 'POST',
    headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
    body: JSON.stringify({ schema: JSON.stringify(schema) }),
  });
  assert.equal(registered.status, 200, await registered.clone().text());
  const schemaId = ((await registered.json()) as { id: number }).id;
  const unregister = await registerApi(urls, {
    id,
    name: id,
    version_data: {
      default: {
        endpoints: [
          {
            id: 'orders',
            method: 'POST',
            path_regex: `/${id}/orders`,
            target: 'kafka',
            topic: sourceTopic,
            schema: subject,
          },
        ],
      },
    },
  });
  const eventId = uniqueName('order');
  // The broker's side first: the consumer joins its group while the rest goes on.
  const records: Array<{ headers: Record<string, string>; value: Buffer }> = [];
  const consumer = new Kafka({ clientId: id, logLevel: logLevel.NOTHING, ...kafka }).consumer({
    groupId: id,
  });
  const sse = await openSse(`${urls.publicUrl}/_gw/v1/connection/sse?${subscribing(urls, type)}`);
  const post = (data: unknown, eventIdOfPost = uniqueName('order')) =>
    postJson(`${urls.publicUrl}/${id}/orders`, {
      specversion: '1.0',
      id: eventIdOfPost,
      type,
      source: 'test-deploy',
      data,
    });
  try {
    await consumer.connect();
    await consumer.subscribe({ topic: sourceTopic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const headers = Object.fromEntries(
          Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]),
        );
        if (headers['ce_id'] === eventId) records.push({ headers, value: message.value! });
      },
    });
    assert.equal(sse.status, 200, sse.errorBody);
    await waitFor(() => sse.events('gw.subscriptions_set').length === 1, { what: 'the SSE subscription' });
    // Every proxy replica applies the definition on the store's notification (404 until then).
    const accepted = await waitFor(
      async () => {
        const r = await post({ item: 'tea', qty: 2 }, eventId);
        return r.status === 404 ? undefined : r;
      },
      { timeoutMs: 30_000, what: 'the API definition on every proxy replica' },
    );
    assert.equal(accepted.status, 202, await accepted.text());
    const unfit = await post({ item: 'tea', qty: 'two' });
    assert.equal(unfit.status, 400);
    const refusal = await unfit.text();
    assert.ok(refusal.includes(`does not match the Avro schema of subject ${subject} (at /qty)`), refusal);
    await waitFor(() => sse.events(type).some((e) => e['id'] === eventId), {
      ...delivery,
      what: 'the Avro event over SSE, decoded by the publisher',
    });
    assert.deepEqual(sse.events(type).find((e) => e['id'] === eventId)!['data'], { item: 'tea', qty: 2 });
    assert.equal(sse.events(type).length, 1, 'the unfit event was not written');
    const [record] = await waitFor(() => (records.length > 0 ? records : undefined), {
      timeoutMs: 30_000,
      what: `the record on ${sourceTopic}`,
    });
    assert.equal(record!.headers['content-type'], 'avro/binary');
    assert.equal(record!.headers['ce_type'], type);
    assert.equal(record!.value[0], 0, "the wire format's magic byte");
    assert.equal(record!.value.readUInt32BE(1), schemaId, "the registered schema's id");
  } finally {
    sse.close();
    await consumer.disconnect().catch(() => {});
    await unregister();
    await fetch(`${registryUrl}/subjects/${subject}`, { method: 'DELETE' }).catch(() => {});
  }
}

/** The REST engine's example app answers on its own port. */
export async function checkRestEngine(urls: GatehouseUrls): Promise<void> {
  const hello = await fetch(`${urls.restUrl}/api/hello/world`);
  assert.equal(hello.status, 200);
  assert.deepEqual(await hello.json(), { hello: 'world' });
  const echo = await fetch(`${urls.restUrl}/api/echo/42?x=1`, { headers: { accept: 'application/json' } });
  const body = await echo.text();
  assert.equal(echo.status, 200, body);
  assert.match(body, /42/);
}

/**
 * A JWT of a fresh session (its `jti`), HS256 with the deployment's JWT_SECRET_KEY, the issuer and
 * audience the deployment accepts, valid for `validSeconds`; `claims` override.
 */
export function sessionJwt(
  jwtSecretKey: string,
  claims: Record<string, unknown> = {},
  validSeconds = 600,
): { sessionId: string; jwt: string } {
  const sessionId = uniqueName('deploy-session');
  const now = Math.floor(Date.now() / 1000);
  return {
    sessionId,
    jwt: signJwt(
      {
        jti: sessionId,
        sub: 'test-deploy',
        iss: deploymentIssuer,
        aud: deploymentAudience,
        iat: now,
        exp: now + validSeconds,
        ...claims,
      },
      { alg: 'HS256', key: jwtSecretKey },
    ),
  };
}

/** The deployment user's JWT (GatehouseUrls.userJwt): long enough for a whole deployment test. */
export function userJwt(jwtSecretKey: string): string {
  return sessionJwt(jwtSecretKey, { sub: 'test-deploy-user' }, 4 * 3600).jwt;
}

/**
 * Blacklisting a session through the internal API closes its open SSE and WebSocket connections,
 * each with gw.session_killed as its last event, and refuses the token afterwards.
 */
export async function checkSessionKill(urls: GatehouseUrls, jwtSecretKey: string): Promise<void> {
  const { sessionId, jwt } = sessionJwt(jwtSecretKey);
  const bystander = sessionJwt(jwtSecretKey);
  const open: WatchedConnection[] = [];
  try {
    for (const transport of ['sse', 'ws'] as const) open.push(await connect(transport, urls.publicUrl, jwt));
    const other = await connect('sse', urls.publicUrl, bystander.jwt);
    open.push(other);
    const res = await postJson(
      `${urls.internalUrl}/v3/session-blacklist`,
      { sessionId, validityInSeconds: 60 },
      internalAuth(urls),
    );
    assert.equal(res.status, 201, await res.text());
    for (const conn of open.slice(0, 2)) {
      const end = await Promise.race([
        conn.ended,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`${conn.transport} connection still open`)), delivery.timeoutMs),
        ),
      ]);
      assert.equal(end.lastEvent, 'gw.session_killed', `${conn.transport}: ${end.how}`);
    }
    assert.equal(other.hasEnded(), false, 'another session stays connected');
    const again = await openSse(`${urls.publicUrl}/_gw/v1/connection/sse?jwt=${jwt}`);
    again.close();
    assert.notEqual(again.status, 200, 'the blacklisted token is refused');
  } finally {
    for (const conn of open) conn.close();
  }
}

/** An SSE connection through the public surface and the replica that holds it (from its connection token). */
export async function openSseOnSomeReplica(
  urls: GatehouseUrls,
  tokenSecret: string,
  eventType: string,
): Promise<{ replica: string; connection: SseConnection }> {
  const connection = await openSse(`${urls.publicUrl}/_gw/v1/connection/sse?${subscribing(urls, eventType)}`);
  assert.equal(connection.status, 200, connection.errorBody);
  await waitFor(() => connection.events('gw.subscriptions_set').length === 1, { what: 'the SSE welcome' });
  const token = (connection.events('gw.connection.create')[0]!['data'] as { connection_token: string })
    .connection_token;
  const decoded = new SignedTokenCodec(tokenSecret, 'connection').decode(token);
  assert.ok(decoded, 'the connection token verifies with the deployment TOKEN_SECRET');
  return { replica: decoded.replica, connection };
}

export interface PrometheusTarget {
  job: string;
  instance: string;
  health: string;
  lastError: string;
}

export async function prometheusTargets(prometheusUrl: string): Promise<PrometheusTarget[]> {
  const res = await fetch(`${prometheusUrl}/api/v1/targets?state=active`);
  assert.equal(res.status, 200);
  const body = (await res.json()) as {
    data: { activeTargets: Array<{ labels: Record<string, string>; health: string; lastError: string }> };
  };
  return body.data.activeTargets.map((t) => ({
    job: t.labels['job']!,
    instance: t.labels['instance']!,
    health: t.health,
    lastError: t.lastError,
  }));
}

/** The value of each series of an instant query. */
export async function prometheusQuery(prometheusUrl: string, query: string): Promise<number[]> {
  const res = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(query)}`);
  assert.equal(res.status, 200, await res.clone().text());
  const body = (await res.json()) as { data: { result: Array<{ value: [number, string] }> } };
  return body.data.result.map((r) => Number(r.value[1]));
}

/** Prometheus has exactly `replicas` targets per job and scrapes every one successfully. */
export async function checkPrometheusTargets(prometheusUrl: string, replicas: Record<string, number>) {
  let last: PrometheusTarget[] = [];
  await waitFor(
    async () => {
      last = await prometheusTargets(prometheusUrl);
      return Object.entries(replicas).every(([job, count]) => {
        const mine = last.filter((t) => t.job === job);
        return mine.length === count && mine.every((t) => t.health === 'up');
      });
    },
    { timeoutMs: 60_000, intervalMs: 1000, what: 'every replica scraped' },
  ).catch((err: Error) => {
    throw new Error(`${err.message}: ${JSON.stringify(last)}`);
  });
  return last;
}
