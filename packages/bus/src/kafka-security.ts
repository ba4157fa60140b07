/**
 * Kafka as managed services run it (Confluent Cloud, MSK, Event Hubs' Kafka endpoint): TLS with a CA
 * file (or the system's CAs), a client certificate for mutual TLS, SASL PLAIN or SCRAM, and the
 * spec's "skip only specific certificates": a broker certificate no trusted CA signs is accepted
 * when its SHA-256 fingerprint is pinned, instead of turning verification off. RIG's variable names
 * where RIG had them. Files are read once at start; bad settings stop start-up with a ConfigError
 * naming the variables.
 */
import { type ConnectionOptions, connect as tlsConnect, type TLSSocket } from 'node:tls';
import { isIP } from 'node:net';
import {
  bool,
  ConfigError,
  type ConfigOf,
  checkKeyPair,
  list,
  optionalStr,
  readSettingFile,
} from '@gatehouse/service-kit';
import type { ISocketFactory, SASLOptions } from 'kafkajs';

export const kafkaSecurityConfig = {
  KAFKA_SSL_ENABLED: bool('connect to Kafka over TLS (implied by any KAFKA_SSL_* file or pin)', false),
  KAFKA_SSL_CA_CERTFILE: optionalStr(
    "PEM file of the CA(s) that sign the brokers' certificates; unset or empty: the system's CAs",
  ),
  KAFKA_SSL_CERTFILE: optionalStr(
    'PEM client certificate for brokers that verify clients (mutual TLS); with KAFKA_SSL_KEYFILE',
  ),
  KAFKA_SSL_KEYFILE: optionalStr('PEM private key of KAFKA_SSL_CERTFILE'),
  KAFKA_SSL_KEYFILE_PASS: optionalStr('passphrase of an encrypted KAFKA_SSL_KEYFILE'),
  KAFKA_SSL_PINNED_SHA256: list(
    'SHA-256 fingerprints (hex, colons optional) of broker certificates accepted although no trusted CA signs them',
  ),
  KAFKA_SASL: optionalStr(
    'SASL credentials as <mechanism>:<user>:<password>, the mechanism plain, scram-sha-256 or scram-sha-512',
  ),
};

export type KafkaSecurityConfig = ConfigOf<typeof kafkaSecurityConfig>;

export interface KafkaSecurity {
  ssl?: ConnectionOptions;
  sasl?: SASLOptions;
  /** Set when fingerprints are pinned: it checks them once the TLS handshake is done. */
  socketFactory?: ISocketFactory;
}

const saslMechanisms = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;

/** What a KafkaBus needs on top of brokers and client id; throws a ConfigError when settings are bad. */
export function kafkaSecurityOptions(config: KafkaSecurityConfig): KafkaSecurity {
  const problems: string[] = [];
  const read = (name: keyof KafkaSecurityConfig) => {
    const file = config[name];
    return typeof file === 'string' && file !== '' ? readSettingFile(name, file, problems) : undefined;
  };
  if ((config.KAFKA_SSL_CERTFILE === undefined) !== (config.KAFKA_SSL_KEYFILE === undefined))
    problems.push('KAFKA_SSL_CERTFILE and KAFKA_SSL_KEYFILE: set both, or neither');
  if (config.KAFKA_SSL_KEYFILE_PASS !== undefined && config.KAFKA_SSL_KEYFILE === undefined)
    problems.push('KAFKA_SSL_KEYFILE_PASS: set only with KAFKA_SSL_KEYFILE');
  const pins = config.KAFKA_SSL_PINNED_SHA256.map(normalizeFingerprint);
  config.KAFKA_SSL_PINNED_SHA256.forEach((pin, i) => {
    if (!/^[0-9a-f]{64}$/.test(pins[i]!))
      problems.push(`KAFKA_SSL_PINNED_SHA256: not a SHA-256 fingerprint (64 hex digits): ${pin}`);
  });
  const sasl = config.KAFKA_SASL === undefined ? undefined : parseSasl(config.KAFKA_SASL, problems);
  const ca = read('KAFKA_SSL_CA_CERTFILE');
  const cert = read('KAFKA_SSL_CERTFILE');
  const key = read('KAFKA_SSL_KEYFILE');
  if (problems.length > 0) throw new ConfigError(problems);
  const passphrase = config.KAFKA_SSL_KEYFILE_PASS;
  if (cert !== undefined && key !== undefined)
    checkKeyPair(
      { cert, key, passphrase },
      { cert: 'KAFKA_SSL_CERTFILE', key: 'KAFKA_SSL_KEYFILE', passphrase: 'KAFKA_SSL_KEYFILE_PASS' },
    );
  const tlsWanted =
    config.KAFKA_SSL_ENABLED ||
    config.KAFKA_SSL_CA_CERTFILE !== undefined ||
    cert !== undefined ||
    pins.length > 0;
  if (!tlsWanted) return sasl ? { sasl } : {};
  const ssl: ConnectionOptions = {
    ...(ca && { ca }),
    ...(cert && key && { cert, key }),
    ...(passphrase !== undefined && { passphrase }),
  };
  return {
    ssl,
    ...(sasl && { sasl }),
    ...(pins.length > 0 && { socketFactory: pinningSocketFactory(new Set(pins)) }),
  };
}

function parseSasl(text: string, problems: string[]): SASLOptions | undefined {
  const [mechanism = '', username, ...rest] = text.split(':');
  const known = saslMechanisms.find((m) => m === mechanism.toLowerCase());
  if (!known || !username || rest.length === 0) {
    // Never the value: it holds a password.
    problems.push(
      `KAFKA_SASL: must look like <mechanism>:<user>:<password>, the mechanism one of ${saslMechanisms.join(', ')}`,
    );
    return undefined;
  }
  return { mechanism: known, username, password: rest.join(':') } as SASLOptions;
}

function normalizeFingerprint(pin: string): string {
  return pin.replaceAll(':', '').toLowerCase();
}

/**
 * kafkajs' own socket, with the chain check moved after the handshake: a certificate a trusted CA
 * signs (for the broker's name) passes as before; one that does not passes only when the SHA-256
 * fingerprint of the broker's own certificate is pinned. Nothing is sent before the check.
 */
function pinningSocketFactory(pins: Set<string>): ISocketFactory {
  return ({ host, port, ssl, onConnect }) => {
    const options: ConnectionOptions = {
      host,
      port,
      ...(!isIP(host) && { servername: host }),
      ...(typeof ssl === 'object' ? ssl : {}),
      rejectUnauthorized: false,
    };
    const socket: TLSSocket = tlsConnect(options, () => {
      if (socket.authorized) return onConnect();
      const fingerprint = normalizeFingerprint(socket.getPeerCertificate().fingerprint256 ?? '');
      if (pins.has(fingerprint)) return onConnect();
      socket.destroy(
        new Error(
          `the broker's certificate is not trusted (${socket.authorizationError}) and its SHA-256 fingerprint ${fingerprint} is not in KAFKA_SSL_PINNED_SHA256`,
        ),
      );
    });
    socket.setKeepAlive(true, 60_000);
    return socket;
  };
}
