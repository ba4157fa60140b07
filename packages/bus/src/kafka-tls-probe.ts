/**
 * One TLS handshake with the first broker before Kafka clients start, so that a certificate nobody
 * vouches for or a client certificate the broker refuses stops start-up at once, naming the
 * setting: kafkajs counts both as connection errors and retries them for about ten seconds, and
 * under TLS 1.3 the broker refuses a client certificate only after the client's side of the
 * handshake is done (its verdict comes with the answer to the first request: here an ApiVersions
 * request, which any listener answers before SASL). A broker that cannot be reached or says nothing
 * within 5 s is no refusal: the clients then meet it as before.
 */
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { isIP } from 'node:net';
import type { ISocketFactory } from 'kafkajs';
import { kafkaSettingOf } from './kafka-errors.ts';

const probeTimeoutMs = 5000;

/** The refusal (a message naming the setting) a TLS connection to `broker` ends in, if any. */
export async function kafkaTlsRefusal(
  broker: string,
  ssl: ConnectionOptions,
  socketFactory: ISocketFactory | undefined,
): Promise<string | undefined> {
  const [host = '', port = '9092'] = splitHostPort(broker);
  const signal = AbortSignal.timeout(probeTimeoutMs);
  let socket: Socket | undefined;
  try {
    const connected = Promise.withResolvers<void>();
    socket = socketFactory
      ? socketFactory({ host, port: Number(port), ssl, onConnect: () => connected.resolve() })
      : tlsConnect({ host, port: Number(port), ...(isIP(host) === 0 && { servername: host }), ...ssl }, () =>
          connected.resolve(),
        );
    const failed = once(socket, 'error', { signal }).then(([err]) => Promise.reject(err as Error));
    await Promise.race([connected.promise, failed]);
    socket.write(apiVersionsRequest());
    await Promise.race([once(socket, 'data', { signal }), failed]);
    return undefined;
  } catch (err) {
    const setting = kafkaSettingOf(err);
    return setting && `cannot connect to Kafka at ${broker}: ${(err as Error).message} (check ${setting})`;
  } finally {
    socket?.destroy();
  }
}

/** ApiVersions v0: size, api key 18, version 0, correlation id 1, client id. */
function apiVersionsRequest(): Buffer {
  const clientId = Buffer.from('gatehouse-tls-probe');
  const body = Buffer.alloc(10 + clientId.length);
  body.writeInt16BE(18, 0);
  body.writeInt16BE(0, 2);
  body.writeInt32BE(1, 4);
  body.writeInt16BE(clientId.length, 8);
  clientId.copy(body, 10);
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length, 0);
  return Buffer.concat([size, body]);
}

function splitHostPort(broker: string): [string, string] {
  const match = /^\[?([^\]]*?)\]?:(\d+)$/.exec(broker);
  return match ? [match[1]!, match[2]!] : [broker, '9092'];
}
