/**
 * Avro where users deploy it: a managed Kafka (SASL_SSL with SCRAM-SHA-512, tools/tls-deps.sh
 * kafka-tls) and a managed schema registry (HTTPS, tools/tls-deps.sh schema-registry-tls). The proxy
 * writes a request event as Avro under the registry's latest schema, reaching the registry with HTTP
 * basic auth and a CA file (Confluent Cloud's way); the publisher reads the topic as a source and
 * decodes it through the same registry over mutual TLS; an SSE client of the hub gets the JSON
 * event. A registry setting that cannot work (a password it refuses, a CA that does not vouch for
 * it, no client certificate where one is required) stops the service at start naming the setting,
 * without the password in the output.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type SchemaRegistryClient, schemaRegistryFrom } from '@gatehouse/avro';
import {
  exitAfterFileWhenHung,
  gatewayEnv,
  kafkaOverSaslSettings,
  openSse,
  type ServiceProcess,
  type SseConnection,
  spawnService,
  tlsDependencyAddress,
  uniqueName,
  untrustedCertificates,
  waitFor,
} from '@gatehouse/testkit';
import { startHub, startPublisher } from '../src/service-processes.ts';

after(() => exitAfterFileWhenHung());

const { schemaRegistryUrl, schemaRegistryMtlsUrl, caFile, certFile, keyFile, user, password } =
  tlsDependencyAddress;
const run = uniqueName('e2e-managed-avro');
const topic = `${run}-orders`;
const subject = `${topic}-value`;
const order = {
  type: 'record',
  name: 'Order',
  fields: [
    { name: 'item', type: 'string' },
    { name: 'qty', type: 'int' },
  ],
};
/** The registry as the proxy reaches it: HTTPS, basic auth, the local CA. */
const proxyRegistry = {
  KAFKA_SCHEMA_REGISTRY_HOST: schemaRegistryUrl,
  KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: `${user}:${password}`,
  KAFKA_SCHEMA_REGISTRY_CA_FILE: caFile,
};
/** The registry as the publisher reaches it: HTTPS with a client certificate. */
const publisherRegistry = {
  KAFKA_SCHEMA_REGISTRY_HOST: schemaRegistryMtlsUrl,
  KAFKA_SCHEMA_REGISTRY_CA_FILE: caFile,
  KAFKA_SCHEMA_REGISTRY_CERT_FILE: certFile,
  KAFKA_SCHEMA_REGISTRY_KEY_FILE: keyFile,
};
const proxyConfig = JSON.stringify([
  {
    id: 'shop',
    name: 'shop',
    version_data: {
      default: {
        endpoints: [
          { id: 'orders', method: 'POST', path_regex: '/orders', target: 'kafka', topic, schema: subject },
        ],
      },
    },
  },
]);

describe('Avro on a managed Kafka through a managed schema registry', () => {
  const shared = {
    ...gatewayEnv({ run, jwtSecret: 'e2e-managed-avro-secret-long-enough-for-hs256' }),
    NATS_SERVERS: '',
    ...kafkaOverSaslSettings('scram-sha-512'),
  };
  const processes: ServiceProcess[] = [];
  let proxy: ServiceProcess;
  let hub: ServiceProcess;
  let sse: SseConnection;

  before(async () => {
    const registry = schemaRegistryFrom({
      ...proxyRegistry,
      KAFKA_SCHEMA_REGISTRY_CACHE_TTL: 0,
      KAFKA_SCHEMA_REGISTRY_TIMEOUT: 5000,
    }) as SchemaRegistryClient;
    await registry.register(subject, order);
    const started = await Promise.all([
      spawnService({
        entry: 'services/proxy/src/main.ts',
        name: 'proxy',
        publicPort: true,
        readyTimeoutMs: 60_000,
        env: { ...shared, ...proxyRegistry, PROXY_CONFIG_FILE: proxyConfig },
      }),
      startPublisher('publisher', {
        ...shared,
        ...publisherRegistry,
        KAFKA_SOURCE_TOPICS: topic,
        KAFKATOFILTER_KAFKA_GROUP_ID: `${run}-kafka-to-filter`,
      }),
      startHub('hub', shared),
    ]);
    processes.push(...started);
    [proxy, , hub] = started;
    const subscriptions = encodeURIComponent(JSON.stringify([{ eventType: 'order' }]));
    sse = await openSse(`${hub.publicUrl}/_gw/v1/connection/sse?subscriptions=${subscriptions}`);
    await waitFor(() => sse.events('gw.subscriptions_set').length === 1, { what: 'the welcome events' });
  });

  after(async () => {
    sse?.close();
    await Promise.all(processes.map((p) => p.stop()));
  });

  it('goes proxy → Avro on SASL_SSL Kafka → publisher → SSE client as JSON', async () => {
    const res = await fetch(`${proxy.publicUrl}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        specversion: '1.0',
        id: 'o1',
        type: 'order',
        source: '/shop',
        data: { item: 'tea', qty: 2 },
      }),
    });
    assert.equal(res.status, 202, await res.text());
    await waitFor(() => sse.events('order').length === 1, {
      what: 'the Avro event decoded over mutual TLS',
      timeoutMs: 60_000,
    });
    assert.deepEqual(sse.events('order')[0]!['data'], { item: 'tea', qty: 2 });
  });

  const untrusted = untrustedCertificates();
  const refusals: Array<{ what: string; entry: string; env: Record<string, string>; setting: RegExp }> = [
    {
      what: 'a password the registry refuses',
      entry: 'services/proxy/src/main.ts',
      env: { ...proxyRegistry, KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: `${user}:not-the-password` },
      setting: /KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: the registry refused the credentials/,
    },
    {
      what: 'a CA that does not vouch for the registry',
      entry: 'services/proxy/src/main.ts',
      env: { ...proxyRegistry, KAFKA_SCHEMA_REGISTRY_CA_FILE: untrusted.caFile },
      setting: /KAFKA_SCHEMA_REGISTRY_CA_FILE does not vouch/,
    },
    {
      what: 'no client certificate for a registry that requires one',
      entry: 'services/publisher/src/main.ts',
      env: { KAFKA_SCHEMA_REGISTRY_HOST: schemaRegistryMtlsUrl, KAFKA_SCHEMA_REGISTRY_CA_FILE: caFile },
      setting: /KAFKA_SCHEMA_REGISTRY_CERT_FILE/,
    },
  ];
  for (const { what, entry, env, setting } of refusals)
    it(`stops at start on ${what}, naming the setting`, async () => {
      await assert.rejects(
        spawnService({ entry, publicPort: true, env: { ...shared, ...env, PROXY_CONFIG_FILE: proxyConfig } }),
        (err: Error) => {
          assert.match(err.message, /exited during start-up/, err.message);
          assert.match(err.message, setting);
          assert.doesNotMatch(err.message, /not-the-password|tls-deps-secret/, 'no password in the output');
          return true;
        },
      );
    });
});
