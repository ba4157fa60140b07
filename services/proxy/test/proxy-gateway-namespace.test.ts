/**
 * The proxy's publish-to-topic path is a producer surface: a topic it writes may be a publisher's
 * source topic, or the fan-out stream itself. Through the proxy's own port, a request whose event
 * names the gateway's own namespace (a `gw.…` type, the source `gatehouse`) is refused with 400 and
 * nothing is published, as is one whose type holds `*` or `>` (the wildcards of subscription type
 * patterns); a body that is not a CloudEvent is wrapped into a type outside it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { authConfig, createAuthFromConfig } from '@gatehouse/auth';
import { type Message, MemoryBus } from '@gatehouse/bus';
import {
  ConfigError,
  commonConfig,
  createLogger,
  createRegistry,
  Health,
  loadConfig,
  type RunningHost,
  startHost,
} from '@gatehouse/service-kit';
import { MemoryStore } from '@gatehouse/store';
import { waitFor } from '@gatehouse/testkit';
import { createProxy, proxyConfig, TargetAllowList, validateApi } from '../src/index.ts';

const api = {
  id: 'events',
  name: 'events',
  version_data: {
    default: {
      endpoints: [{ id: 'pub', method: 'POST', path_regex: '/publish', target: 'kafka', topic: 'gw.events' }],
    },
  },
  proxy: { use_env: false, target_url: 'http://127.0.0.1', port: 9 },
};

function definition() {
  const checked = validateApi(api, { targets: new TargetAllowList(['127.0.0.1']) });
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  return checked.api;
}

function settings(env: Record<string, string> = {}) {
  return loadConfig(
    { ...commonConfig, ...authConfig, ...proxyConfig },
    { TOKEN_SECRET: 'proxy-namespace-test-secret', ...env },
  );
}

describe('the gw namespace on the proxy publish path', () => {
  const kafka = new MemoryBus();
  const store = new MemoryStore();
  const published: Message[] = [];
  let host: RunningHost;
  let url: string;
  before(async () => {
    const config = settings();
    const auth = createAuthFromConfig(config, store);
    await auth.start();
    const logger = createLogger({ name: 'proxy-namespace-test', level: 'silent' });
    const registry = createRegistry();
    const health = new Health();
    await kafka.subscribe('gw.events', (m) => void published.push(m));
    host = await startHost({
      services: [
        createProxy(config, {
          store,
          auth,
          controlBus: new MemoryBus(),
          kafka,
          initialApis: [definition()],
          replica: 'r1',
          logger,
          registry,
          health,
        }),
      ],
      logger,
      registry,
      health,
      host: '127.0.0.1',
      publicPort: 0,
      apiPort: 0,
      closeables: [auth, kafka, store],
    });
    url = `http://127.0.0.1:${host.publicPort}/publish`;
  });
  after(() => host?.stop());

  const post = (headers: Record<string, string>, body: string) =>
    fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });

  it('refuses reserved types and sources with 400, in structured and binary mode, and publishes none', async () => {
    const forged = [
      { type: 'gw.session_killed', source: 'gatehouse' },
      { type: 'gw.connection.create', source: 'app', data: { connection_token: 'forged' } },
      { type: 'Gw.Subscriptions_Set', source: 'app' },
      { type: 'order.created', source: 'GATEHOUSE' },
    ];
    for (const [i, f] of forged.entries()) {
      const structured = await post(
        { 'content-type': 'application/cloudevents+json' },
        JSON.stringify({ specversion: '1.0', id: `s${i}`, ...f }),
      );
      const text = await structured.text();
      assert.equal(structured.status, 400, text);
      assert.match(text, /^Bad request: invalid CloudEvent: '(type|source)' .* is reserved: /);
      const binary = await post(
        {
          'content-type': 'application/json',
          'ce-specversion': '1.0',
          'ce-id': `b${i}`,
          'ce-type': f.type,
          'ce-source': f.source,
        },
        '{}',
      );
      assert.equal(binary.status, 400, await binary.text());
    }
    // The deprecated wrapper carries an event too.
    const legacy = await post(
      { 'content-type': 'application/json' },
      JSON.stringify({
        partition: 'p',
        event: { specversion: '0.2', id: 'l', type: 'gw.session_killed', source: 'app' },
      }),
    );
    assert.equal(legacy.status, 400, await legacy.text());

    const plain = await post({ 'content-type': 'application/json' }, '{"order":1}');
    assert.equal(plain.status, 202, await plain.text());
    await waitFor(() => published.length >= 1);
    assert.equal(published.length, 1, 'only the plain body was published');
    assert.equal(JSON.parse(published[0]!.value.toString()).type, 'proxy.request');
  });

  it('refuses a type holding a wildcard of subscription patterns with 400, and publishes none', async () => {
    const before = published.length;
    for (const type of ['order.*', 'order.>', 'a*b']) {
      const res = await post(
        { 'content-type': 'application/cloudevents+json' },
        JSON.stringify({ specversion: '1.0', id: type, type, source: 'app' }),
      );
      const text = await res.text();
      assert.equal(res.status, 400, text);
      assert.match(text, /holds "\*" or ">": they are the wildcards of subscription patterns/);
    }
    const plain = await post({ 'content-type': 'application/json' }, '{"order":2}');
    assert.equal(plain.status, 202, await plain.text());
    await waitFor(() => published.length > before);
    assert.equal(published.length, before + 1, 'only the plain body was published');
  });

  it('refuses at start a PROXY_WRAPPED_EVENT_TYPE in the gateway namespace', async () => {
    const config = settings({ PROXY_WRAPPED_EVENT_TYPE: 'gw.proxy.request' });
    const auth = createAuthFromConfig(config, store);
    assert.throws(
      () =>
        createProxy(config, {
          store,
          auth,
          controlBus: new MemoryBus(),
          initialApis: [],
          replica: 'r2',
          logger: createLogger({ name: 't', level: 'silent' }),
          registry: createRegistry(),
          health: new Health(),
        }),
      (err: unknown) => err instanceof ConfigError && /PROXY_WRAPPED_EVENT_TYPE/.test(err.message),
    );
  });
});
