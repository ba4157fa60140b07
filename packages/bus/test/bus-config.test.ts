import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '@gatehouse/service-kit';
import {
  natsOverTlsSettings,
  redisOverTlsSettings,
  tlsDependencyAddress as tls,
  uniqueName,
  untrustedCertificates,
  waitFor,
} from '@gatehouse/testkit';
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
      ...redisOverTlsSettings,
      REDIS_URL: url,
      REDIS_CLUSTER: String(cluster),
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

describe('nats bus over TLS with a user', () => {
  const env = (changes: Record<string, string | undefined> = {}) => ({
    ...natsOverTlsSettings,
    ...changes,
  });
  const refusal = async (changes: Record<string, string | undefined>) => {
    const started = Date.now();
    const err = await connectBus('nats', loadConfig(busConfig, env(changes))).then(
      async (bus) => {
        await bus.close();
        return undefined;
      },
      (e: Error) => e,
    );
    assert.ok(err, 'the bus connected');
    assert.ok(Date.now() - started < 8000, `refused after ${Date.now() - started} ms`);
    return err;
  };

  it('carries a message from one bus to another', async () => {
    const buses = await connectBoth('nats', env());
    try {
      await roundTrip(buses.publisher, buses.hub);
    } finally {
      await buses.close();
    }
  });

  it('refuses a wrong password at start, naming the setting', async () => {
    const err = await refusal({ NATS_PASSWORD: 'wrong' });
    assert.match(err.message, /NATS_PASSWORD/);
    assert.doesNotMatch(err.message, /wrong|tls-deps-secret/);
  });

  it('refuses a server the CA file does not vouch for, naming NATS_TLS_CA_FILE', async () => {
    const err = await refusal({ NATS_TLS_CA_FILE: untrusted.caFile });
    assert.match(err.message, /NATS_TLS_CA_FILE/);
  });

  it('is refused by the server with a client certificate of another CA, naming NATS_TLS_CERT_FILE', async () => {
    const err = await refusal({
      NATS_TLS_CERT_FILE: untrusted.certFile,
      NATS_TLS_KEY_FILE: untrusted.keyFile,
    });
    assert.match(err.message, /NATS_TLS_CERT_FILE/);
  });

  it('connects with a token, and names the credentials when the token is refused', async () => {
    const tokenEnv = (token: string) => ({
      NATS_SERVERS: tls.natsTokenUrl,
      NATS_TLS_CA_FILE: tls.caFile,
      NATS_TOKEN: token,
    });
    const buses = await connectBoth('nats', tokenEnv(tls.token));
    try {
      await roundTrip(buses.publisher, buses.hub);
    } finally {
      await buses.close();
    }
    await assert.rejects(
      connectBus('nats', loadConfig(busConfig, tokenEnv('not-the-token'))),
      (err: Error) => {
        assert.match(err.message, /NATS_TOKEN/);
        assert.doesNotMatch(err.message, /not-the-token/);
        return true;
      },
    );
  });

  it('stops start-up naming a file that cannot be read, or credentials of two kinds', async () => {
    const configError = (changes: Record<string, string | undefined>, pattern: RegExp) =>
      assert.rejects(connectBus('nats', loadConfig(busConfig, env(changes))), (err: Error) => {
        assert.ok(err instanceof ConfigError, err.message);
        assert.match(err.message, pattern);
        return true;
      });
    await configError({ NATS_TLS_CA_FILE: '/nonexistent/ca.pem' }, /NATS_TLS_CA_FILE: cannot read/);
    await configError({ NATS_TLS_KEY_FILE: undefined }, /NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE/);
    await configError(
      { NATS_TLS_KEY_FILE: untrusted.keyFile },
      /NATS_TLS_KEY_FILE: not the key of NATS_TLS_CERT_FILE/,
    );
    await configError({ NATS_CREDS_FILE: '/nonexistent/user.creds' }, /NATS_CREDS_FILE: cannot read/);
    await configError({ NATS_TOKEN: 'a-token' }, /NATS_USER.*NATS_TOKEN|NATS_TOKEN.*NATS_USER/);
    await configError(
      { NATS_USER: undefined, NATS_PASSWORD: undefined, NATS_CREDS_FILE: untrusted.caFile },
      /NATS_CREDS_FILE: not a \.creds file/,
    );
  });
});
