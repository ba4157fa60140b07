import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { selfSignedCertificate } from '@gatehouse/testkit';
import {
  ConfigError,
  type GatewayService,
  type RunningHost,
  sendJson,
  tlsSettingsFrom,
} from '../src/index.ts';
import { startTestHost } from './test-host.ts';

const { certFile, keyFile } = selfSignedCertificate();
let host: RunningHost;
let cert: Buffer;

const service: GatewayService = {
  name: 'echo',
  public: (req, res) => {
    sendJson(res, 200, { httpVersion: req.httpVersion, path: req.url });
    return true;
  },
};

describe('service host: HTTPS and HTTP/2 on the public edge', () => {
  before(async () => {
    cert = readFileSync(certFile);
    const tls = tlsSettingsFrom({
      HTTPS_CERTFILE: certFile,
      HTTPS_KEYFILE: keyFile,
      HTTPS_KEYFILE_PASS: undefined,
      INBOUND_HTTPS_PORT: 0,
    });
    host = await startTestHost({
      services: [service],
      publicPort: 0,
      tls,
    });
  });
  after(() => host?.stop());

  it('answers HTTP/2 over TLS', async () => {
    const session = connect(`https://127.0.0.1:${host.publicTlsPort}`, { ca: cert });
    const stream = session.request({ ':path': '/hello' });
    let status = 0;
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    let body = '';
    stream.on('data', (c: Buffer) => (body += c.toString()));
    await new Promise((r) => stream.on('end', r));
    session.close();
    assert.equal(status, 200);
    assert.deepEqual(JSON.parse(body), { httpVersion: '2.0', path: '/hello' });
  });

  it('answers HTTP/1.1 over TLS, and plain HTTP stays on its port', async () => {
    const body = await new Promise<string>((resolve, reject) => {
      httpsRequest({ host: '127.0.0.1', port: host.publicTlsPort, path: '/one', ca: cert }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(text));
      })
        .on('error', reject)
        .end();
    });
    assert.deepEqual(JSON.parse(body), { httpVersion: '1.1', path: '/one' });
    const plain = await fetch(`http://127.0.0.1:${host.publicPort}/plain`);
    assert.deepEqual(await plain.json(), { httpVersion: '1.1', path: '/plain' });
  });

  it('refuses half a TLS configuration and unreadable files, naming them', () => {
    const base = { HTTPS_KEYFILE_PASS: undefined, INBOUND_HTTPS_PORT: 4001 };
    assert.equal(
      tlsSettingsFrom({ ...base, HTTPS_CERTFILE: undefined, HTTPS_KEYFILE: undefined }),
      undefined,
    );
    assert.throws(
      () => tlsSettingsFrom({ ...base, HTTPS_CERTFILE: certFile, HTTPS_KEYFILE: undefined }),
      (err: unknown) => err instanceof ConfigError && /set both/.test(err.message),
    );
    assert.throws(
      () => tlsSettingsFrom({ ...base, HTTPS_CERTFILE: '/nope/cert.pem', HTTPS_KEYFILE: '/nope/key.pem' }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.problems.length === 2 &&
        /HTTPS_CERTFILE: cannot read/.test(err.problems[0]!),
    );
  });
});
