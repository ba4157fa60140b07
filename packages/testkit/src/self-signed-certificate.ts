/** A throw-away certificate for 127.0.0.1 / localhost (openssl), for tests of HTTPS and HTTP/2. */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { throwAwayDir } from './throw-away-dir.ts';

export function selfSignedCertificate(dir = throwAwayDir('gw-cert-')): {
  certFile: string;
  keyFile: string;
} {
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost'].concat([
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ]),
    { stdio: 'ignore' },
  );
  return { certFile, keyFile };
}
