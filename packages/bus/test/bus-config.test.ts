import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '@gatehouse/service-kit';
import { tlsDependencyAddress as tls, uniqueName, untrustedCertificates, waitFor } from '@gatehouse/testkit';
import { type Bus, busConfig, connectBus, type Message } from '../src/index.ts';

const untrusted = untrustedCertificates();

/** Publishes on one bus and hears it on another, as a publisher and a hub do. */
async function roundTrip(publisher: Bus, hub: Bus): Promise<void> {
  const topic = uniqueName('tls-bus');
  const got: Message[] = [];
  const sub = await hub.subscribe(topic, (m) => void got.push(m));
  try {
    await publisher.publish(topic, { value: Buffer.from('over tls') });
    await waitFor(() => got.length === 1, { what: 'the message over TLS' });
    assert.equal(got[0]!.value.toString(), 'over tls');
  } finally {
    await sub.close();
  }
}

async function connectBoth(kind: 'redis' | 'nats', env: Record<string, string | undefined>) {
  const config = loadConfig(busConfig, env);
  const publisher = await connectBus(kind, config);
  const hub = await connectBus(kind, config).catch(async (err) => {
    await publisher.close();
    throw err;
  });
  return { publisher, hub, close: async () => Promise.all([publisher.close(), hub.close()]) };
}

for (const { name, url, cluster } of [
  { name: 'redis', url: tls.redisUrl, cluster: false },
  { name: 'redis cluster', url: tls.redisClusterUrl, cluster: true },
]) {
  describe(`${name} bus over TLS with an ACL user`, () => {
    const env = (changes: Record<string, string> = {}) => ({
      REDIS_URL: url,
      REDIS_CLUSTER: String(cluster),
      REDIS_TLS_CA_FILE: tls.caFile,
      REDIS_TLS_CERT_FILE: tls.certFile,
      REDIS_TLS_KEY_FILE: tls.keyFile,
      REDIS_USERNAME: tls.user,
      REDIS_PASSWORD: tls.password,
      ...changes,
    });

    it('carries a message from one bus to another', async () => {
      const buses = await connectBoth('redis', env());
      try {
        await roundTrip(buses.publisher, buses.hub);
      } finally {
        await buses.close();
      }
    });

    it('refuses a wrong password at start, naming the setting', async () => {
      await assert.rejects(
        connectBus('redis', loadConfig(busConfig, env({ REDIS_PASSWORD: 'wrong' }))),
        /REDIS_PASSWORD/,
      );
    });

    it('refuses a server the CA file does not vouch for, naming REDIS_TLS_CA_FILE', async () => {
      const config = loadConfig(busConfig, env({ REDIS_TLS_CA_FILE: untrusted.caFile }));
      await assert.rejects(connectBus('redis', config), /REDIS_TLS_CA_FILE/);
    });
  });
}
