/**
 * The files of a client's TLS settings (a CA, a client certificate and its key, for Redis, NATS …):
 * read once at start, every problem collected under the variable's name, and a key checked against
 * its certificate here rather than at the server's first handshake.
 */
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { ConfigError } from './env-config.ts';

/** Reads the file a setting names; a failure is added to `problems` under the setting's name. */
export function readSettingFile(
  name: string,
  file: string | undefined,
  problems: string[],
): string | undefined {
  if (file === undefined) return undefined;
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    problems.push(`${name}: cannot read ${file}: ${(err as Error).message}`);
    return undefined;
  }
}

/** A ConfigError naming the settings when `key` is not `cert`'s, or `passphrase` does not open it. */
export function checkKeyPair(
  pair: { cert: string; key: string; passphrase?: string | undefined },
  names: { cert: string; key: string; passphrase?: string },
): void {
  try {
    createSecureContext({
      cert: pair.cert,
      key: pair.key,
      ...(pair.passphrase !== undefined && { passphrase: pair.passphrase }),
    });
  } catch (err) {
    const pass = names.passphrase ? `, or ${names.passphrase} does not open it` : '';
    throw new ConfigError([`${names.key}: not the key of ${names.cert}${pass}: ${(err as Error).message}`]);
  }
}

// Node's codes for a server certificate the trusted CAs do not vouch for (or that names another host).
const untrustedServerCode =
  /^(UNABLE_TO_|SELF_SIGNED_CERT|DEPTH_ZERO_SELF_SIGNED|CERT_|ERR_TLS_CERT_ALTNAME)/;
// The server's TLS alert when it wants a client certificate, or does not trust the one it got.
const clientCertificateAlert =
  /alert (certificate required|unknown ca|bad certificate|certificate unknown)|peer did not return a certificate/i;

/** Whether a connection failed because the server's certificate is not trusted (by Node's code). */
export function isUntrustedServerCertificate(err: { code?: unknown }): boolean {
  return typeof err.code === 'string' && untrustedServerCode.test(err.code);
}

/** Whether a connection's error message is the server refusing the client's certificate. */
export function isRefusedClientCertificate(message: string): boolean {
  return clientCertificateAlert.test(message);
}
