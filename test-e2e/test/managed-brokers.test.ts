/**
 * The gateway on brokers configured as managed services run them (tools/tls-deps.sh): a hub and a
 * publisher on a Redis that takes TLS only, wants a client certificate and an ACL user (store,
 * fan-out stream and control channel all on it), then with the fan-out stream on a NATS with TLS,
 * client certificates and a user, then on a Kafka that takes clients only over TLS: SASL_SSL with
 * SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN, SSL with client certificates, and a broker certificate no
 * trusted CA signs accepted by its pinned fingerprint. An event goes publisher → broker → hub → SSE
 * client. A service given a wrong password, a CA that does not vouch for the server, a client
 * certificate of another CA or another pin stops at start naming the setting, and never answers
 * /ready with 200.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import {
  gatewayEnv,
  kafkaOverMtlsSettings,
  kafkaOverSaslSettings,
  natsOverTlsSettings,
  openSse,
  redisOverTlsSettings,
  type ServiceProcess,
  type SseConnection,
  spawnService,
  uniqueName,
  tlsDependencyAddress,
  untrustedCertificates,
  waitFor,
} from '@gatehouse/testkit';

const jwtSecret = 'e2e-managed-brokers-secret-long-enough-for-hs256';
const greetings = encodeURIComponent(JSON.stringify([{ eventType: 'greeting', oneOf: [] }]));

const untrusted = untrustedCertificates();
const fingerprintOf = (file: string) => new X509Certificate(readFileSync(file)).fingerprint256;
interface Setup {
  name: string;
  fanout: 'redis' | 'nats' | 'kafka';
  brokers: Record<string, string>;
  refusals: Array<{ what: string; changes: Record<string, string>; setting: RegExp }>;
}

const setups: Setup[] = [
  {
    name: 'Redis with TLS, a client certificate and an ACL user',
    fanout: 'redis',
    brokers: { ...redisOverTlsSettings, NATS_SERVERS: '' },
    refusals: [
      {
        what: 'a wrong password',
        changes: { REDIS_PASSWORD: 'not-the-password' },
        setting: /REDIS_PASSWORD/,
      },
      {
        what: 'a CA that does not vouch for the server',
        changes: { REDIS_TLS_CA_FILE: untrusted.caFile },
        setting: /REDIS_TLS_CA_FILE/,
      },
    ],
  },
  {
    name: 'NATS with TLS, a client certificate and a user (store and control channel on that Redis)',
    fanout: 'nats',
    brokers: { ...redisOverTlsSettings, ...natsOverTlsSettings },
    refusals: [
      { what: 'a wrong password', changes: { NATS_PASSWORD: 'not-the-password' }, setting: /NATS_PASSWORD/ },
      {
        what: 'a client certificate of another CA',
        changes: {
          NATS_TLS_CERT_FILE: untrusted.certFile,
          NATS_TLS_KEY_FILE: untrusted.keyFile,
        },
        setting: /NATS_TLS_CERT_FILE/,
      },
    ],
  },
  {
    name: 'Kafka over SASL_SSL with SCRAM-SHA-256 (store and control channel on that Redis)',
    fanout: 'kafka',
    brokers: { ...redisOverTlsSettings, ...kafkaOverSaslSettings('scram-sha-256'), NATS_SERVERS: '' },
    refusals: [
      {
        what: 'a wrong password',
        changes: { KAFKA_SASL: 'scram-sha-256:gatehouse:not-the-password' },
        setting: /KAFKA_SASL/,
      },
      {
        what: 'a CA that does not vouch for the broker',
        changes: { KAFKA_SSL_CA_CERTFILE: untrusted.caFile },
        setting: /KAFKA_SSL_CA_CERTFILE/,
      },
    ],
  },
  {
    name: 'Kafka over SASL_SSL with SCRAM-SHA-512',
    fanout: 'kafka',
    brokers: { ...redisOverTlsSettings, ...kafkaOverSaslSettings('scram-sha-512'), NATS_SERVERS: '' },
    refusals: [],
  },
  {
    name: 'Kafka over SASL_SSL with PLAIN',
    fanout: 'kafka',
    brokers: { ...redisOverTlsSettings, ...kafkaOverSaslSettings('plain'), NATS_SERVERS: '' },
    refusals: [],
  },
  {
    name: 'Kafka over mutual TLS',
    fanout: 'kafka',
    brokers: { ...redisOverTlsSettings, ...kafkaOverMtlsSettings, NATS_SERVERS: '' },
    refusals: [
      {
        what: 'a client certificate of another CA',
        changes: { KAFKA_SSL_CERTFILE: untrusted.certFile, KAFKA_SSL_KEYFILE: untrusted.keyFile },
        setting: /KAFKA_SSL_CERTFILE/,
      },
    ],
  },
  {
    name: 'Kafka whose certificate no trusted CA signs, accepted by its pinned fingerprint',
    fanout: 'kafka',
    brokers: {
      ...redisOverTlsSettings,
      ...kafkaOverSaslSettings('scram-sha-512'),
      KAFKA_SSL_CA_CERTFILE: '',
      KAFKA_SSL_PINNED_SHA256: fingerprintOf(tlsDependencyAddress.serverCertFile),
      NATS_SERVERS: '',
    },
    refusals: [
      {
        what: 'a pin of another certificate',
        changes: { KAFKA_SSL_PINNED_SHA256: fingerprintOf(untrusted.caFile) },
        setting: /KAFKA_SSL_PINNED_SHA256/,
      },
      {
        what: 'no pin and no CA that vouches for it',
        changes: { KAFKA_SSL_PINNED_SHA256: '', KAFKA_SSL_ENABLED: 'true' },
        setting: /KAFKA_SSL_CA_CERTFILE/,
      },
    ],
  },
];

for (const { name, fanout, brokers, refusals } of setups)
  describe(`the gateway on ${name}`, () => {
    const processes: ServiceProcess[] = [];
    const open: SseConnection[] = [];
    const run = uniqueName('managed');
    const shared = {
      ...gatewayEnv({ run, jwtSecret, fanout }),
      KAFKA_BROKERS: '',
      KAFKA_SOURCE_TOPICS: '',
      NATS_SOURCE_TOPICS: '',
      ...brokers,
    };
    let hub: ServiceProcess;
    let publisher: ServiceProcess;

    before(async () => {
      hub = await spawnService({ entry: 'services/push-hub/src/main.ts', publicPort: true, env: shared });
      processes.push(hub);
      publisher = await spawnService({
        entry: 'services/publisher/src/main.ts',
        publicPort: true,
        env: shared,
      });
      processes.push(publisher);
    });
    after(async () => {
      for (const c of open) c.close();
      await Promise.all(processes.map((p) => p.stop()));
    });

    it('delivers an event from the publisher to an SSE client of the hub', async () => {
      const conn = await openSse(`${hub.publicUrl}/_gw/v1/connection/sse?subscriptions=${greetings}`);
      open.push(conn);
      assert.equal(conn.status, 200, conn.errorBody);
      await waitFor(() => conn.events('gw.subscriptions_set').length === 1, { what: 'the welcome events' });
      const res = await fetch(`${publisher.publicUrl}/_gw/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/cloudevents+json' },
        body: JSON.stringify({
          specversion: '1.0',
          id: 'g1',
          source: 'e2e',
          type: 'greeting',
          data: { n: 1 },
        }),
      });
      assert.equal(res.status, 202, await res.text());
      await waitFor(() => conn.events('greeting').length === 1, { what: 'the event over TLS' });
      assert.deepEqual(conn.events('greeting')[0]!['data'], { n: 1 });
    });

    for (const { what, changes, setting } of refusals) {
      it(`stops at start on ${what}, naming the setting, never ready`, async () => {
        const started = Date.now();
        await assert.rejects(
          spawnService({
            entry: 'services/push-hub/src/main.ts',
            publicPort: true,
            env: { ...shared, ...changes },
          }),
          (err: Error) => {
            assert.match(err.message, /exited during start-up/, err.message);
            assert.match(err.message, setting);
            assert.doesNotMatch(err.message, /not-the-password|tls-deps-secret/, 'no password in the output');
            return true;
          },
        );
        assert.ok(Date.now() - started < 15_000, `stopped after ${Date.now() - started} ms`);
      });
    }
  });
