/**
 * A Kafka broker that takes clients only over TLS with SASL (docker-compose.yml's kafka-tls profile),
 * checked from the host on its published listener as an operator would: it answers nothing in
 * plaintext, refuses a TLS client without SASL and one with a wrong password, and serves its user
 * over SCRAM-SHA-512 and PLAIN with a certificate of the CA it was given.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Kafka, type KafkaConfig, logLevel, type SASLOptions } from 'kafkajs';

export interface KafkaTlsAccess {
  /** The broker's SASL_SSL listener as `host:port`. */
  brokers: string[];
  user: string;
  password: string;
  /** The CA certificate (PEM) that signed the broker's certificate. */
  ca: string;
}

/** kafkajs settings for the broker: TLS verified with the CA, SASL with the user and `mechanism`. */
export function kafkaTlsClient(
  access: KafkaTlsAccess,
  mechanism: 'plain' | 'scram-sha-512' = 'scram-sha-512',
): Pick<KafkaConfig, 'brokers' | 'ssl' | 'sasl'> {
  return {
    brokers: access.brokers,
    ssl: { ca: [access.ca] },
    sasl: { mechanism, username: access.user, password: access.password } as SASLOptions,
  };
}

/** The broker refuses every client but its user over TLS, and takes that user with either mechanism. */
export async function checkKafkaTlsRefusals(access: KafkaTlsAccess): Promise<void> {
  const [host = '', port = ''] = access.brokers[0]!.split(':');
  const answer = await rawApiVersions(host, Number(port));
  assert.ok(
    !(answer.length >= 8 && answer.readInt32BE(4) === 1),
    `a Kafka answer to a plaintext ApiVersions request: ${answer.toString('hex')}`,
  );
  const client = kafkaTlsClient(access);
  const refused: Array<[string, KafkaConfig, RegExp]> = [
    ['plaintext', { brokers: access.brokers }, /./],
    ['TLS without SASL', { brokers: access.brokers, ssl: client.ssl! }, /./],
    [
      'a wrong password',
      {
        ...client,
        sasl: { mechanism: 'scram-sha-512', username: access.user, password: 'not-the-password' },
      },
      /SASL|authentication/i,
    ],
    [
      'another user',
      { ...client, sasl: { mechanism: 'plain', username: 'someone-else', password: access.password } },
      /SASL|authentication/i,
    ],
  ];
  for (const [what, config, error] of refused) {
    const outcome = await listTopics(config);
    assert.ok(outcome instanceof Error, `a client with ${what} was served: ${String(outcome)}`);
    assert.match(`${outcome.name}: ${outcome.message}`, error, what);
  }
  for (const mechanism of ['scram-sha-512', 'plain'] as const) {
    const outcome = await listTopics(kafkaTlsClient(access, mechanism));
    assert.ok(Array.isArray(outcome), `${mechanism}: ${String(outcome)}`);
  }
}

/** The topics, or the error one attempt (no retries, 3 s to connect) ends in. */
async function listTopics(config: KafkaConfig): Promise<string[] | Error> {
  const kafka = new Kafka({
    clientId: 'test-deploy-kafka-tls',
    connectionTimeout: 3000,
    requestTimeout: 5000,
    retry: { retries: 0 },
    logLevel: logLevel.NOTHING,
    ...config,
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    return await admin.listTopics();
  } catch (err) {
    return err as Error;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

/**
 * Sends a plaintext ApiVersions v0 request (correlation id 1) and returns whatever comes back before
 * the connection closes or 3 s pass. A plaintext listener answers it, a TLS one does not (at most a
 * TLS alert).
 */
function rawApiVersions(host: string, port: number): Promise<Buffer> {
  const clientId = Buffer.from('test-deploy');
  const body = Buffer.alloc(10 + clientId.length);
  body.writeInt16BE(18, 0);
  body.writeInt16BE(0, 2);
  body.writeInt32BE(1, 4);
  body.writeInt16BE(clientId.length, 8);
  clientId.copy(body, 10);
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length, 0);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, host, () => socket.write(Buffer.concat([size, body])));
    socket.setTimeout(3000, () => socket.destroy());
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A reset after the request is a refusal too; a connect that fails is not the check's subject.
      if (err.code === 'ECONNRESET') return;
      reject(err);
    });
    socket.on('close', () => resolve(Buffer.concat(chunks)));
  });
}
