/**
 * The registry as managed registries serve it (tools/tls-deps.sh schema-registry-tls: HTTPS with
 * basic auth, HTTPS with client certificates required, a local CA): the client the settings make
 * registers, encodes and decodes over each; the start-up check names the setting behind a refusal
 * (an untrusted certificate, refused or missing credentials, a missing client certificate, a URL
 * without the registry API) and lets a registry that is only down pass with a warning; settings
 * that cannot work are refused before any request.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '@gatehouse/service-kit';
import {
  dependencyAddress,
  tlsDependencyAddress,
  uniqueName,
  untrustedCertificates,
} from '@gatehouse/testkit';
import {
  checkSchemaRegistry,
  type SchemaRegistryConfig,
  SchemaRegistryClient,
  schemaRegistryFrom,
} from '../src/index.ts';

const { schemaRegistryUrl, schemaRegistryMtlsUrl, caFile, certFile, keyFile, user, password } =
  tlsDependencyAddress;
const untrusted = untrustedCertificates();
const order = { type: 'record', name: 'Order', fields: [{ name: 'item', type: 'string' }] };

function settings(changes: Partial<SchemaRegistryConfig>): SchemaRegistryConfig {
  return {
    KAFKA_SCHEMA_REGISTRY_HOST: schemaRegistryUrl,
    KAFKA_SCHEMA_REGISTRY_CACHE_TTL: 0,
    KAFKA_SCHEMA_REGISTRY_TIMEOUT: 3000,
    ...changes,
  };
}
const overBasicAuth = settings({
  KAFKA_SCHEMA_REGISTRY_CA_FILE: caFile,
  KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: `${user}:${password}`,
});
const overMtls = settings({
  KAFKA_SCHEMA_REGISTRY_HOST: schemaRegistryMtlsUrl,
  KAFKA_SCHEMA_REGISTRY_CA_FILE: caFile,
  KAFKA_SCHEMA_REGISTRY_CERT_FILE: certFile,
  KAFKA_SCHEMA_REGISTRY_KEY_FILE: keyFile,
});

const quiet = { warn: () => {} };
async function refusal(config: SchemaRegistryConfig): Promise<string> {
  const error = await checkSchemaRegistry(schemaRegistryFrom(config), quiet).then(
    () => assert.fail('the check passed'),
    (err: unknown) => err,
  );
  assert.ok(error instanceof ConfigError, String(error));
  assert.doesNotMatch(error.message, new RegExp(password), 'no password in the message');
  return error.message;
}
function configRefusal(config: SchemaRegistryConfig): string {
  try {
    schemaRegistryFrom(config);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.message;
  }
  return assert.fail('the settings were taken');
}

describe('the schema registry over HTTPS', () => {
  for (const [name, config] of [
    ['with basic auth and a CA file', overBasicAuth],
    ['with a client certificate (mutual TLS)', overMtls],
  ] as const)
    it(`registers, encodes and decodes ${name}, and passes the start-up check`, async () => {
      const registry = schemaRegistryFrom(config);
      assert.ok(registry);
      await checkSchemaRegistry(registry, quiet);
      const subject = `${uniqueName('avro-tls')}-value`;
      const id = await registry.register(subject, order);
      const wire = await registry.encode(subject, { item: 'tea' });
      assert.equal(wire.readUInt32BE(1), id);
      assert.deepEqual({ ...((await registry.decode(wire)) as object) }, { item: 'tea' });
    });

  it('takes the credentials from the URL too', async () => {
    const url = new URL(schemaRegistryUrl);
    url.username = user;
    url.password = password;
    await checkSchemaRegistry(
      schemaRegistryFrom(
        settings({ KAFKA_SCHEMA_REGISTRY_HOST: url.href, KAFKA_SCHEMA_REGISTRY_CA_FILE: caFile }),
      ),
      quiet,
    );
  });
});

describe('the start-up check names the setting behind a refusal', () => {
  it('a certificate the CA file does not vouch for', async () => {
    const message = await refusal({ ...overBasicAuth, KAFKA_SCHEMA_REGISTRY_CA_FILE: untrusted.caFile });
    assert.match(message, /KAFKA_SCHEMA_REGISTRY_CA_FILE does not vouch for the registry's certificate/);
  });

  it("the system's CAs when the registry's CA is a private one", async () => {
    const message = await refusal({ ...overBasicAuth, KAFKA_SCHEMA_REGISTRY_CA_FILE: undefined });
    assert.match(message, /KAFKA_SCHEMA_REGISTRY_CA_FILE/);
  });

  it('a wrong password, and no credentials at all', async () => {
    const wrong = await refusal({ ...overBasicAuth, KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: `${user}:not-it` });
    assert.match(
      wrong,
      /KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: the registry refused the credentials .* answered 401/,
    );
    const none = await refusal({ ...overBasicAuth, KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: undefined });
    assert.match(none, /KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: the registry asks for credentials/);
  });

  it('no client certificate for a registry that requires one', async () => {
    const message = await refusal({
      ...overMtls,
      KAFKA_SCHEMA_REGISTRY_CERT_FILE: undefined,
      KAFKA_SCHEMA_REGISTRY_KEY_FILE: undefined,
    });
    assert.match(message, /KAFKA_SCHEMA_REGISTRY_CERT_FILE: the registry wants a client certificate/);
  });

  it('a URL without the registry API (the ccompat path left out)', async () => {
    const host = schemaRegistryUrl.replace('/apis/ccompat/v7', '/apis');
    const message = await refusal({ ...overBasicAuth, KAFKA_SCHEMA_REGISTRY_HOST: host });
    assert.match(
      message,
      /KAFKA_SCHEMA_REGISTRY_HOST: no Confluent-compatible registry API at .*\/apis \(GET \/subjects answered 404/,
    );
  });

  it('lets a registry that is only down pass, with a warning', async () => {
    const warnings: unknown[] = [];
    const down = settings({ KAFKA_SCHEMA_REGISTRY_HOST: 'http://127.0.0.1:9/apis/ccompat/v7' });
    await checkSchemaRegistry(schemaRegistryFrom(down), {
      warn: (...args: unknown[]) => void warnings.push(args),
    });
    assert.equal(warnings.length, 1);
    assert.match(JSON.stringify(warnings[0]), /ECONNREFUSED/);
  });

  it('passes a plaintext registry, and no registry at all', async () => {
    await checkSchemaRegistry(
      schemaRegistryFrom(settings({ KAFKA_SCHEMA_REGISTRY_HOST: dependencyAddress.schemaRegistryUrl })),
      quiet,
    );
    await checkSchemaRegistry(schemaRegistryFrom(settings({ KAFKA_SCHEMA_REGISTRY_HOST: undefined })), quiet);
  });
});

describe('settings that cannot work are refused before any request', () => {
  const cases: Array<[string, Partial<SchemaRegistryConfig>, RegExp]> = [
    [
      'TLS files for an http:// registry',
      {
        KAFKA_SCHEMA_REGISTRY_HOST: dependencyAddress.schemaRegistryUrl,
        KAFKA_SCHEMA_REGISTRY_CA_FILE: caFile,
      },
      /KAFKA_SCHEMA_REGISTRY_CA_FILE: the registry is reached over http:\/\//,
    ],
    [
      'a certificate without its key',
      { KAFKA_SCHEMA_REGISTRY_CERT_FILE: certFile },
      /KAFKA_SCHEMA_REGISTRY_CERT_FILE and KAFKA_SCHEMA_REGISTRY_KEY_FILE: set both, or neither/,
    ],
    [
      'a key that is not the certificate’s',
      { KAFKA_SCHEMA_REGISTRY_CERT_FILE: certFile, KAFKA_SCHEMA_REGISTRY_KEY_FILE: untrusted.keyFile },
      /KAFKA_SCHEMA_REGISTRY_KEY_FILE: not the key of KAFKA_SCHEMA_REGISTRY_CERT_FILE/,
    ],
    [
      'a CA file that cannot be read',
      { KAFKA_SCHEMA_REGISTRY_CA_FILE: '/nonexistent/ca.pem' },
      /KAFKA_SCHEMA_REGISTRY_CA_FILE: cannot read \/nonexistent\/ca.pem/,
    ],
    [
      'basic auth without a colon',
      { KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: 'just-a-key' },
      /KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: must look like <user>:<password>/,
    ],
    [
      'basic auth and credentials in the URL',
      {
        KAFKA_SCHEMA_REGISTRY_HOST: schemaRegistryUrl.replace('https://', 'https://a:b@'),
        KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: `${user}:${password}`,
      },
      /KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: the URL in KAFKA_SCHEMA_REGISTRY_HOST has credentials too/,
    ],
    [
      'registry settings without a registry',
      { KAFKA_SCHEMA_REGISTRY_HOST: undefined, KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: `${user}:${password}` },
      /KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: set only with KAFKA_SCHEMA_REGISTRY_HOST/,
    ],
  ];
  for (const [what, changes, expected] of cases)
    it(what, () => {
      const message = configRefusal(settings(changes));
      assert.match(message, expected);
      assert.doesNotMatch(message, new RegExp(password));
    });
});

describe('a registry that refuses at run time', () => {
  it('counts as unavailable (503), not as bad input', async () => {
    const registry = new SchemaRegistryClient({
      url: schemaRegistryUrl,
      auth: { username: user, password: 'revoked' },
      agent: schemaRegistryFrom(overBasicAuth)!.endpoint.agent!,
      cacheTtlMs: 0,
      timeoutMs: 3000,
    });
    await assert.rejects(registry.encode('any-value', { item: 'tea' }), {
      name: 'DependencyUnavailableError',
    });
  });
});
