import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '@gatehouse/service-kit';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  kafkaOverMtlsSettings,
  kafkaOverSaslSettings,
  natsOverTlsSettings,
  redisOverTlsSettings,
  tlsDependencyAddress as tls,
  uniqueName,
  untrustedCertificates,
  waitFor,
} from '@gatehouse/testkit';
import { type Bus, busConfig, connectBus, type Message } from '../src/all.ts';

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

async function connectBoth(kind: 'redis' | 'nats' | 'kafka', env: Record<string, string | undefined>) {
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

describe('kafka bus over TLS', () => {
  const serverPin = new X509Certificate(readFileSync(tls.serverCertFile)).fingerprint256;
  const refusedWith = (env: Record<string, string | undefined>, pattern: RegExp) =>
    assert.rejects(connectBus('kafka', loadConfig(busConfig, env)), (err: Error) => {
      assert.match(err.message, pattern);
      assert.doesNotMatch(err.message, /tls-deps-secret|not-the-password/, 'no password in the message');
      return true;
    });

  for (const mechanism of ['scram-sha-256', 'scram-sha-512', 'plain'] as const)
    it(`carries a message over SASL_SSL with ${mechanism}`, async () => {
      const buses = await connectBoth('kafka', kafkaOverSaslSettings(mechanism));
      try {
        await roundTrip(buses.publisher, buses.hub);
      } finally {
        await buses.close();
      }
    });

  it('carries a message over mutual TLS', async () => {
    const buses = await connectBoth('kafka', kafkaOverMtlsSettings);
    try {
      await roundTrip(buses.publisher, buses.hub);
    } finally {
      await buses.close();
    }
  });

  it('accepts a certificate no trusted CA signs when its fingerprint is pinned, in either spelling', async () => {
    for (const pin of [serverPin, serverPin.replaceAll(':', '').toLowerCase()]) {
      const buses = await connectBoth('kafka', {
        ...kafkaOverSaslSettings('scram-sha-256'),
        KAFKA_SSL_CA_CERTFILE: '',
        KAFKA_SSL_PINNED_SHA256: pin,
      });
      try {
        await roundTrip(buses.publisher, buses.hub);
      } finally {
        await buses.close();
      }
    }
  });

  it('refuses, at connect and naming the setting, another pin, an untrusted CA, a refused client certificate', async () => {
    const sasl = kafkaOverSaslSettings('scram-sha-256');
    const otherPin = new X509Certificate(readFileSync(untrusted.caFile)).fingerprint256;
    await refusedWith(
      { ...sasl, KAFKA_SSL_CA_CERTFILE: '', KAFKA_SSL_PINNED_SHA256: otherPin },
      /not in KAFKA_SSL_PINNED_SHA256/,
    );
    await refusedWith({ ...sasl, KAFKA_SSL_CA_CERTFILE: untrusted.caFile }, /check KAFKA_SSL_CA_CERTFILE/);
    await refusedWith(
      {
        ...kafkaOverMtlsSettings,
        KAFKA_SSL_CERTFILE: untrusted.certFile,
        KAFKA_SSL_KEYFILE: untrusted.keyFile,
      },
      /check KAFKA_SSL_CERTFILE/,
    );
  });

  it('refuses a wrong password at the first request, naming KAFKA_SASL', async () => {
    const config = loadConfig(busConfig, {
      ...kafkaOverSaslSettings('scram-sha-512'),
      KAFKA_SASL: 'scram-sha-512:gatehouse:not-the-password',
    });
    const bus = await connectBus('kafka', config);
    try {
      await assert.rejects(bus.ping(), (err: Error) => {
        assert.match(err.message, /KAFKA_SASL/);
        assert.doesNotMatch(err.message, /not-the-password/);
        return true;
      });
    } finally {
      await bus.close();
    }
  });

  it('stops start-up naming settings that cannot work', async () => {
    const configError = (env: Record<string, string | undefined>, pattern: RegExp) =>
      assert.rejects(connectBus('kafka', loadConfig(busConfig, env)), (err: Error) => {
        assert.ok(err instanceof ConfigError, err.message);
        assert.match(err.message, pattern);
        assert.doesNotMatch(err.message, /tls-deps-secret|s3cret/, 'no password in the message');
        return true;
      });
    const mtls = kafkaOverMtlsSettings;
    await configError(
      { ...mtls, KAFKA_SSL_CA_CERTFILE: '/nonexistent/ca.pem' },
      /KAFKA_SSL_CA_CERTFILE: cannot read/,
    );
    await configError({ ...mtls, KAFKA_SSL_KEYFILE: undefined }, /KAFKA_SSL_CERTFILE and KAFKA_SSL_KEYFILE/);
    await configError({ ...mtls, KAFKA_SSL_KEYFILE: untrusted.keyFile }, /KAFKA_SSL_KEYFILE: not the key of/);
    await configError({ ...mtls, KAFKA_SSL_PINNED_SHA256: 'abc' }, /KAFKA_SSL_PINNED_SHA256: not a SHA-256/);
    await configError({ ...mtls, KAFKA_SASL: 'gssapi:user:s3cret' }, /KAFKA_SASL: must look like/);
    await configError({ ...mtls, KAFKA_SASL: 'plain:s3cret' }, /KAFKA_SASL: must look like/);
  });
});
