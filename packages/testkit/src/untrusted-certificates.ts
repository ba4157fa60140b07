/**
 * A CA of the test run's own and a client certificate it signed (openssl): trusted by nobody, so a
 * server that checks client certificates refuses it, and a client trusting only this CA refuses
 * every server started by tools/deps.sh.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { throwAwayDir } from './throw-away-dir.ts';

export function untrustedCertificates(dir = throwAwayDir('gw-untrusted-')): {
  caFile: string;
  certFile: string;
  keyFile: string;
} {
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=untrusted-ca',
    '-keyout',
    file('ca-key.pem'),
    '-out',
    file('ca.pem'),
  );
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=gatehouse',
    '-keyout',
    file('client-key.pem'),
    '-out',
    file('client.csr'),
  );
  writeFileSync(file('client.ext'), 'extendedKeyUsage=clientAuth\n');
  openssl(
    'x509',
    '-req',
    '-in',
    file('client.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca-key.pem'),
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    file('client.ext'),
    '-out',
    file('client.pem'),
  );
  return { caFile: file('ca.pem'), certFile: file('client.pem'), keyFile: file('client-key.pem') };
}
