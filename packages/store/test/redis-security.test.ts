import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '@gatehouse/service-kit';
import {
  redisOverTlsSettings,
  tlsDependencyAddress as tls,
  uniqueName,
  untrustedCertificates,
} from '@gatehouse/testkit';
import { connectStore, type Store, storeConfig } from '../src/index.ts';

const untrusted = untrustedCertificates();
const deployments = [
  { name: 'redis over TLS', url: tls.redisUrl, cluster: false },
  { name: 'redis cluster over TLS', url: tls.redisClusterUrl, cluster: true },
];

function settings(url: string, cluster: boolean, changes: Record<string, string | undefined> = {}) {
  return {
    ...redisOverTlsSettings,
    REDIS_URL: url,
    REDIS_CLUSTER: String(cluster),
    STORE_KEY_PREFIX: `${uniqueName('tls-store')}:`,
    ...changes,
  };
}

/** Connects as a service does, from its settings; resolves to the error when it refuses. */
async function connectionRefusal(env: Record<string, string | undefined>): Promise<Error> {
  const started = Date.now();
  const err = await connectStore(loadConfig(storeConfig, env)).then(
    async (store) => {
      await store.close();
      return undefined;
    },
    (e: Error) => e,
  );
  assert.ok(err, 'the store connected');
  // Refused at once, not after the 10 s connect time-out.
  assert.ok(Date.now() - started < 8000, `refused after ${Date.now() - started} ms: ${err.message}`);
  return err;
}

for (const { name, url, cluster } of deployments) {
  describe(`store on ${name} with an ACL user`, () => {
    const stores: Store[] = [];
    after(async () => {
      for (const s of stores) await s.close();
    });

    it('connects with the CA, the client certificate and the user from settings, and works', async () => {
      const store = await connectStore(loadConfig(storeConfig, settings(url, cluster)));
      stores.push(store);
      await store.set('a', 'over tls');
      assert.equal(await store.get('a'), 'over tls');
      assert.deepEqual(await store.keys(''), ['a']);
    });

    it('takes the user and password from the URL too', async () => {
      const inUrl = url.replace('rediss://', `rediss://${tls.user}:${encodeURIComponent(tls.password)}@`);
      const env = settings(inUrl, cluster, { REDIS_USERNAME: undefined, REDIS_PASSWORD: undefined });
      const store = await connectStore(loadConfig(storeConfig, env));
      stores.push(store);
      await store.set('b', 'url credentials');
      assert.equal(await store.get('b'), 'url credentials');
    });

    it('refuses a wrong password at start, naming the settings', async () => {
      const err = await connectionRefusal(settings(url, cluster, { REDIS_PASSWORD: 'wrong' }));
      assert.match(err.message, /REDIS_PASSWORD/);
      assert.doesNotMatch(err.message, /wrong|tls-deps-secret/, 'no password in the message');
    });

    it('refuses a server whose certificate the CA file does not sign, naming REDIS_TLS_CA_FILE', async () => {
      const err = await connectionRefusal(settings(url, cluster, { REDIS_TLS_CA_FILE: untrusted.caFile }));
      assert.match(err.message, /REDIS_TLS_CA_FILE/);
    });

    it('is refused by the server with a client certificate of another CA, naming REDIS_TLS_CERT_FILE', async () => {
      const env = settings(url, cluster, {
        REDIS_TLS_CERT_FILE: untrusted.certFile,
        REDIS_TLS_KEY_FILE: untrusted.keyFile,
      });
      const err = await connectionRefusal(env);
      assert.match(err.message, /REDIS_TLS_CERT_FILE/);
    });
  });
}

describe('redis TLS settings', () => {
  const load = (changes: Record<string, string | undefined>) =>
    connectStore(loadConfig(storeConfig, settings(tls.redisUrl, false, changes)));

  it('stop start-up naming a file that cannot be read', async () => {
    await assert.rejects(load({ REDIS_TLS_CA_FILE: '/nonexistent/ca.pem' }), (err: Error) => {
      assert.ok(err instanceof ConfigError, err.message);
      assert.match(err.message, /REDIS_TLS_CA_FILE: cannot read \/nonexistent\/ca.pem/);
      return true;
    });
  });

  it('stop start-up when a client certificate comes without its key', async () => {
    await assert.rejects(load({ REDIS_TLS_KEY_FILE: undefined }), (err: Error) => {
      assert.ok(err instanceof ConfigError, err.message);
      assert.match(err.message, /REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE/);
      return true;
    });
  });

  it('stop start-up when the key does not belong to the certificate', async () => {
    await assert.rejects(load({ REDIS_TLS_KEY_FILE: untrusted.keyFile }), (err: Error) => {
      assert.ok(err instanceof ConfigError, err.message);
      assert.match(err.message, /REDIS_TLS_KEY_FILE/);
      return true;
    });
  });

  it('open an encrypted key with REDIS_TLS_KEY_PASS, and stop start-up naming it when it does not', async () => {
    const encrypted = join(mkdtempSync(join(tmpdir(), 'gw-key-')), 'client-key.enc.pem');
    execFileSync('openssl', [
      'pkey',
      '-in',
      tls.keyFile,
      '-aes256',
      '-passout',
      'pass:key-pass',
      '-out',
      encrypted,
    ]);
    const store = await load({ REDIS_TLS_KEY_FILE: encrypted, REDIS_TLS_KEY_PASS: 'key-pass' });
    try {
      await store.set('k', 'with an encrypted key');
      assert.equal(await store.get('k'), 'with an encrypted key');
    } finally {
      await store.close();
    }
    await assert.rejects(
      load({ REDIS_TLS_KEY_FILE: encrypted, REDIS_TLS_KEY_PASS: 'wrong' }),
      (err: Error) => {
        assert.ok(err instanceof ConfigError, err.message);
        assert.match(err.message, /REDIS_TLS_KEY_PASS does not open it/);
        return true;
      },
    );
  });

  it('stop start-up when TLS files are set for a redis:// URL (they would be ignored)', async () => {
    await assert.rejects(load({ REDIS_URL: 'redis://127.0.0.1:6390' }), (err: Error) => {
      assert.ok(err instanceof ConfigError, err.message);
      assert.match(err.message, /REDIS_TLS_CA_FILE.*rediss:\/\//);
      return true;
    });
  });
});
