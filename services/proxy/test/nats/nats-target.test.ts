import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { busConfig, connectNats, natsSecurityOptions } from '@gatehouse/bus/all';
import { loadConfig } from '@gatehouse/service-kit';
import {
  natsOverTlsSettings,
  tlsDependencyAddress as tls,
  uniqueName,
  untrustedCertificates,
  waitFor,
} from '@gatehouse/testkit';
import type { NatsConnection } from '@nats-io/transport-node';
import { NatsTarget } from '../../src/nats/nats-target.ts';

/** The proxy's settings for the NATS of tools/tls-deps.sh: TLS, a client certificate, a user. */
const security = (changes: Record<string, string> = {}) =>
  natsSecurityOptions(loadConfig(busConfig, { ...natsOverTlsSettings, ...changes }));

describe('NATS target over TLS with a user', () => {
  let listener: NatsConnection;
  let target: NatsTarget | undefined;
  const subject = uniqueName('proxy-tls');
  const seen: string[] = [];

  before(async () => {
    listener = await connectNats({ ...security(), servers: tls.natsUrl });
    const sub = listener.subscribe(subject);
    void (async () => {
      for await (const m of sub) seen.push(Buffer.from(m.data).toString());
    })();
    await listener.flush();
  });
  after(async () => {
    await target?.close();
    await listener?.drain();
  });

  it('publishes a request event to the subject', async () => {
    target = await NatsTarget.connect([tls.natsUrl], 'proxy-tls-test', security());
    await target.publish(subject, { specversion: '1.0', id: 'e1', source: 'test', type: 'order.created' });
    await waitFor(() => seen.length === 1, { what: 'the event over TLS' });
    assert.equal(JSON.parse(seen[0]!).id, 'e1');
  });

  it('refuses at start a password or a client certificate the server does not take, naming the setting', async () => {
    const untrusted = untrustedCertificates();
    await assert.rejects(
      NatsTarget.connect([tls.natsUrl], 'proxy-tls-test', security({ NATS_PASSWORD: 'wrong' })),
      /NATS_PASSWORD/,
    );
    await assert.rejects(
      NatsTarget.connect(
        [tls.natsUrl],
        'proxy-tls-test',
        security({ NATS_TLS_CERT_FILE: untrusted.certFile, NATS_TLS_KEY_FILE: untrusted.keyFile }),
      ),
      /NATS_TLS_CERT_FILE/,
    );
  });
});
