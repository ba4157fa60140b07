/**
 * HTTPS and HTTP/2 on the public edge (the spec: "HTTP/2 and HTTPS" since 2.0): when both
 * HTTPS_CERTFILE and HTTPS_KEYFILE are set, the edge also listens on INBOUND_HTTPS_PORT with TLS,
 * offering HTTP/2 by ALPN and HTTP/1.1 to clients without it. Plain HTTP stays on INBOUND_PORT.
 * Files are read once at start; a missing half or an unreadable file is a ConfigError.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from './env-config.ts';

export interface TlsSettings {
  cert: Buffer;
  key: Buffer;
  passphrase?: string;
  port: number;
}

export interface TlsConfig {
  HTTPS_CERTFILE: string | undefined;
  HTTPS_KEYFILE: string | undefined;
  HTTPS_KEYFILE_PASS: string | undefined;
  INBOUND_HTTPS_PORT: number;
}

export function tlsSettingsFrom(config: TlsConfig): TlsSettings | undefined {
  const { HTTPS_CERTFILE: certFile, HTTPS_KEYFILE: keyFile } = config;
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined)
    throw new ConfigError(['HTTPS_CERTFILE and HTTPS_KEYFILE: set both, or neither']);
  const problems: string[] = [];
  const read = (name: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      problems.push(`${name}: cannot read ${file}: ${(err as Error).message}`);
      return Buffer.alloc(0);
    }
  };
  const cert = read('HTTPS_CERTFILE', certFile);
  const key = read('HTTPS_KEYFILE', keyFile);
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    cert,
    key,
    port: config.INBOUND_HTTPS_PORT,
    ...(config.HTTPS_KEYFILE_PASS !== undefined && { passphrase: config.HTTPS_KEYFILE_PASS }),
  };
}
