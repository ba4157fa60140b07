/**
 * Redis as managed services run it: TLS (`rediss://`) with a CA file and a client certificate, and
 * an ACL user with a password, for the store, the bus and Redis Cluster alike. Files are read once
 * at start; a file that cannot be read, a certificate without its key, a key that does not match,
 * or TLS files for a plaintext URL stop start-up with a ConfigError naming the variable.
 */
import type { ConnectionOptions } from 'node:tls';
import {
  ConfigError,
  type ConfigOf,
  checkKeyPair,
  optionalStr,
  readSettingFile,
} from '@gatehouse/service-kit';
import type { RedisOptions } from 'ioredis';
import { parseRedisUrl } from './redis-url.ts';

export const redisSecurityConfig = {
  REDIS_USERNAME: optionalStr(
    "Redis ACL user (wins over a user in REDIS_URL); unset: the URL's, else `default`",
  ),
  REDIS_PASSWORD: optionalStr("password of the ACL user or requirepass (wins over REDIS_URL's)"),
  REDIS_TLS_CA_FILE: optionalStr(
    "PEM file of the CA(s) that sign the Redis servers' certificates (needs rediss://); unset: the system's CAs",
  ),
  REDIS_TLS_CERT_FILE: optionalStr(
    'PEM client certificate (chain) for Redis servers that require one (tls-auth-clients); with REDIS_TLS_KEY_FILE',
  ),
  REDIS_TLS_KEY_FILE: optionalStr('PEM private key of REDIS_TLS_CERT_FILE'),
  REDIS_TLS_KEY_PASS: optionalStr('passphrase of REDIS_TLS_KEY_FILE, when it is encrypted'),
};

type RedisSecurityConfig = ConfigOf<typeof redisSecurityConfig> & { REDIS_URL: string };

const tlsFiles = ['REDIS_TLS_CA_FILE', 'REDIS_TLS_CERT_FILE', 'REDIS_TLS_KEY_FILE'] as const;

/** The ioredis options (credentials, TLS) the settings ask for; throws a ConfigError when bad. */
export function redisSecurityOptions(config: RedisSecurityConfig): Partial<RedisOptions> {
  const credentials = {
    ...(config.REDIS_USERNAME !== undefined && { username: config.REDIS_USERNAME }),
    ...(config.REDIS_PASSWORD !== undefined && { password: config.REDIS_PASSWORD }),
  };
  const named = tlsFiles.filter((name) => config[name] !== undefined);
  if (named.length === 0) return credentials;
  if (!parseRedisUrl(config.REDIS_URL).tls)
    throw new ConfigError([`${named.join(', ')}: set, but REDIS_URL is not a rediss:// (TLS) URL`]);
  return { ...credentials, tls: tlsOptions(config) };
}

function tlsOptions(config: RedisSecurityConfig): ConnectionOptions {
  const { REDIS_TLS_CERT_FILE: certFile, REDIS_TLS_KEY_FILE: keyFile } = config;
  if ((certFile === undefined) !== (keyFile === undefined))
    throw new ConfigError(['REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE: set both, or neither']);
  const problems: string[] = [];
  const ca = readSettingFile('REDIS_TLS_CA_FILE', config.REDIS_TLS_CA_FILE, problems);
  const cert = readSettingFile('REDIS_TLS_CERT_FILE', certFile, problems);
  const key = readSettingFile('REDIS_TLS_KEY_FILE', keyFile, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  const passphrase = config.REDIS_TLS_KEY_PASS;
  if (cert !== undefined && key !== undefined)
    checkKeyPair(
      { cert, key, passphrase },
      { cert: 'REDIS_TLS_CERT_FILE', key: 'REDIS_TLS_KEY_FILE', passphrase: 'REDIS_TLS_KEY_PASS' },
    );
  return {
    ...(ca !== undefined && { ca }),
    ...(cert !== undefined && key !== undefined && { cert, key }),
    ...(passphrase !== undefined && { passphrase }),
  };
}
