/**
 * NATS as managed deployments run it: TLS with a CA file and a client certificate, and one kind of
 * credentials (user and password, a token, or a `.creds` file holding a user JWT and its NKey
 * seed), for every NATS client of the project (the bus, NATS sources, the proxy's NATS targets).
 * Files are read once at start; a file that cannot be read, a certificate without its key, a
 * `.creds` file without a JWT and seed, or two kinds of credentials stop start-up with a ConfigError
 * naming the variables.
 */
import {
  ConfigError,
  type ConfigOf,
  checkKeyPair,
  optionalStr,
  readSettingFile,
} from '@gatehouse/service-kit';
import type { NodeConnectionOptions } from '@nats-io/transport-node';

export const natsSecurityConfig = {
  NATS_USER: optionalStr('NATS user (with NATS_PASSWORD)'),
  NATS_PASSWORD: optionalStr('password of NATS_USER'),
  NATS_TOKEN: optionalStr('NATS authentication token (instead of a user)'),
  NATS_CREDS_FILE: optionalStr('NATS .creds file: a user JWT and its NKey seed (instead of a user or token)'),
  NATS_TLS_CA_FILE: optionalStr(
    "PEM file of the CA(s) that sign the NATS servers' certificates; unset: the system's CAs",
  ),
  NATS_TLS_CERT_FILE: optionalStr(
    'PEM client certificate for NATS servers that verify clients; with NATS_TLS_KEY_FILE',
  ),
  NATS_TLS_KEY_FILE: optionalStr('PEM private key of NATS_TLS_CERT_FILE'),
};

export type NatsSecurityConfig = ConfigOf<typeof natsSecurityConfig>;

/**
 * Connection options plus the `.creds` file's text, which connectNats turns into the client's
 * authenticator (so reading the settings does not load the NATS client).
 */
export type NatsSecurityOptions = Partial<NodeConnectionOptions> & { creds?: Uint8Array };

/** What the connection needs on top of servers and name; throws a ConfigError when settings are bad. */
export function natsSecurityOptions(config: NatsSecurityConfig): NatsSecurityOptions {
  const problems: string[] = [];
  const read = (name: keyof NatsSecurityConfig) => readSettingFile(name, config[name], problems);
  const kinds = [
    config.NATS_USER !== undefined || config.NATS_PASSWORD !== undefined ? 'NATS_USER/NATS_PASSWORD' : '',
    config.NATS_TOKEN !== undefined ? 'NATS_TOKEN' : '',
    config.NATS_CREDS_FILE !== undefined ? 'NATS_CREDS_FILE' : '',
  ].filter(Boolean);
  if (kinds.length > 1)
    problems.push(`${kinds.join(', ')}: set one kind of NATS credentials, not ${kinds.length}`);
  if ((config.NATS_USER === undefined) !== (config.NATS_PASSWORD === undefined))
    problems.push('NATS_USER and NATS_PASSWORD: set both, or neither');
  if ((config.NATS_TLS_CERT_FILE === undefined) !== (config.NATS_TLS_KEY_FILE === undefined))
    problems.push('NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE: set both, or neither');
  const ca = read('NATS_TLS_CA_FILE');
  const cert = read('NATS_TLS_CERT_FILE');
  const key = read('NATS_TLS_KEY_FILE');
  const creds = read('NATS_CREDS_FILE');
  if (creds !== undefined && !isCredsFile(creds))
    problems.push(
      `NATS_CREDS_FILE: not a .creds file (a USER JWT and a USER NKEY SEED block): ${config.NATS_CREDS_FILE}`,
    );
  if (problems.length > 0) throw new ConfigError(problems);
  if (cert !== undefined && key !== undefined)
    checkKeyPair({ cert, key }, { cert: 'NATS_TLS_CERT_FILE', key: 'NATS_TLS_KEY_FILE' });
  const tlsWanted = ca !== undefined || cert !== undefined;
  return {
    ...(config.NATS_USER !== undefined && { user: config.NATS_USER, pass: config.NATS_PASSWORD }),
    ...(config.NATS_TOKEN !== undefined && { token: config.NATS_TOKEN }),
    ...(creds !== undefined && { creds: new TextEncoder().encode(creds) }),
    ...(tlsWanted && { tls: { ...(ca && { ca }), ...(cert && key && { cert, key }) } }),
  };
}

/** The two blocks `nsc` writes; the client would only find out at the first connect. */
function isCredsFile(text: string): boolean {
  return /-----BEGIN NATS USER JWT-----/.test(text) && /-----BEGIN USER NKEY SEED-----/.test(text);
}
