/**
 * Opening a NATS connection the same way for every client of the project: a first connection the
 * server refuses (credentials, a certificate either side does not trust) fails with a message
 * naming the settings to fix (nats-security.ts).
 *
 * With TLS, the first server is asked once for a TLS handshake before the client connects: under
 * TLS 1.3 a server refuses a client certificate after the client's side of the handshake is done,
 * and the client library then waits out its 20 s connect time-out without saying why.
 */
import { once } from 'node:events';
import { connect as tcpConnect, isIP } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { isRefusedClientCertificate, isUntrustedServerCertificate } from '@gatehouse/service-kit';
import {
  connect,
  credsAuthenticator,
  type NatsConnection,
  type NodeConnectionOptions,
} from '@nats-io/transport-node';

const probeTimeoutMs = 5000;

export type { NatsSecurityOptions } from './nats-security.ts';

/** `creds`: a `.creds` file's bytes (natsSecurityOptions), made the connection's authenticator. */
export async function connectNats(
  settings: NodeConnectionOptions & { creds?: Uint8Array | undefined },
): Promise<NatsConnection> {
  const { creds, ...rest } = settings;
  const options: NodeConnectionOptions =
    creds === undefined ? rest : { ...rest, authenticator: credsAuthenticator(creds) };
  if (typeof options.tls === 'object' && options.tls !== null) {
    const first = [options.servers ?? []].flat()[0];
    const refusal = first === undefined ? undefined : await tlsRefusal(first, options.tls);
    if (refusal !== undefined) throw new Error(refusal);
  }
  try {
    return await connect(options);
  } catch (err) {
    const refusal = natsRefusal(err as Error);
    if (refusal === undefined) throw err;
    throw new Error(refusal, { cause: err });
  }
}

/** What to fix when `err` (or its cause) is a refusal that retrying cannot cure; else undefined. */
export function natsRefusal(err: Error): string | undefined {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const { message, code } = e as Error & { code?: string };
    if (
      /authorization violation|authentication expired|user authentication/i.test(message) ||
      code === 'AUTHORIZATION_VIOLATION'
    )
      return `NATS_USER / NATS_PASSWORD, NATS_TOKEN or NATS_CREDS_FILE refused by the server: ${message}`;
    if (isUntrustedServerCertificate({ code }))
      return `NATS_TLS_CA_FILE does not vouch for the server's certificate: ${message}`;
    if (isRefusedClientCertificate(message))
      return `NATS_TLS_CERT_FILE / NATS_TLS_KEY_FILE: the server refused the client certificate: ${message}`;
  }
  return undefined;
}

/** The refusal a TLS handshake with `server` ends in, if any (an unreachable server is no refusal). */
async function tlsRefusal(
  server: string,
  tls: { ca?: string; cert?: string; key?: string },
): Promise<string | undefined> {
  const url = new URL(server.includes('://') ? server : `nats://${server}`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // A server that answers nothing, or closes without a word, ends the probe by this signal.
  const signal = AbortSignal.timeout(probeTimeoutMs);
  const socket = tcpConnect(Number(url.port || 4222), host);
  let secure: ReturnType<typeof tlsConnect> | undefined;
  try {
    await once(socket, 'data', { signal }); // the server's INFO; TLS starts after it
    secure = tlsConnect({ socket, ...tls, ...(isIP(host) === 0 && { servername: host }) });
    // The server's verdict on the client certificate comes with its first answer after the handshake.
    secure.once('secureConnect', () => secure?.write('PING\r\n'));
    // once() rejects with the socket's error: a refused handshake, or a certificate refused.
    return await once(secure, 'data', { signal }).then(
      () => undefined,
      (err: Error) => natsRefusal(err),
    );
  } catch {
    return undefined;
  } finally {
    secure?.destroy();
    socket.destroy();
  }
}
