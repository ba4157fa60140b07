/**
 * Spans to a real collector (the Jaeger of tools/deps.sh, and traces-tls: the same Jaeger taking
 * OTLP only over TLS with client certificates) over each protocol of OTEL_EXPORTER_OTLP_PROTOCOL,
 * read back through its query API; headers and the default encoding seen on the wire by a local
 * receiver; unusable settings refused at start naming the variable.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import {
  dependencyAddress,
  fetchTrace,
  tlsDependencyAddress as tls,
  untrustedCertificates,
  waitFor,
} from '@gatehouse/testkit';
import { contextWithRemoteParent, startTracing } from '../src/index.ts';

/** Starts tracing with `env`, records one span under a fresh trace id, shuts down; the trace id. */
async function exportOneSpan(env: NodeJS.ProcessEnv): Promise<string> {
  const traceId = randomBytes(16).toString('hex');
  const handle = await startTracing({ serviceName: 'otlp-exporter-test', env });
  try {
    const parent = contextWithRemoteParent(
      {
        traceparent: { version: '00', traceId, parentId: randomBytes(8).toString('hex'), traceFlags: 1 },
        tracestate: [],
      },
      ROOT_CONTEXT,
    );
    trace.getTracer('gatehouse').startSpan('exporter test', {}, parent).end();
  } finally {
    await handle.shutdown();
  }
  return traceId;
}

async function arrived(traceId: string, queryUrl?: string): Promise<void> {
  await waitFor(async () => (await fetchTrace(traceId, queryUrl)).some((s) => s.name === 'exporter test'), {
    timeoutMs: 15_000,
    what: `trace ${traceId} at the collector`,
  });
}

const mutualTls = {
  OTEL_EXPORTER_OTLP_CERTIFICATE: tls.caFile,
  OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: tls.certFile,
  OTEL_EXPORTER_OTLP_CLIENT_KEY: tls.keyFile,
};

describe('OTLP to a real collector', () => {
  it('sends http/protobuf when no protocol is set', async () => {
    await arrived(await exportOneSpan({ OTEL_EXPORTER_OTLP_ENDPOINT: dependencyAddress.tracesOtlpUrl }));
  });

  it('sends http/json when asked', async () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: dependencyAddress.tracesOtlpUrl,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    };
    await arrived(await exportOneSpan(env));
  });

  it('sends grpc over TLS with a client certificate', async () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: tls.tracesOtlpGrpcUrl,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      ...mutualTls,
    };
    await arrived(await exportOneSpan(env), tls.tracesQueryUrl);
  });

  it('sends http/protobuf over TLS with a client certificate (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL wins)', async () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: tls.tracesOtlpHttpUrl,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      ...mutualTls,
    };
    await arrived(await exportOneSpan(env), tls.tracesQueryUrl);
  });

  it('refuses to send to a collector whose certificate the CA file does not vouch for', async () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: tls.tracesOtlpHttpUrl,
      ...mutualTls,
      OTEL_EXPORTER_OTLP_CERTIFICATE: untrustedCertificates().caFile,
    };
    // The export at shutdown fails on the certificate: nothing went over that connection.
    await assert.rejects(exportOneSpan(env), /unable to verify the first certificate/);
  });
});

describe('OTLP on the wire', () => {
  const received: Array<{ headers: IncomingHttpHeaders }> = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push({ headers: req.headers });
      res.writeHead(200, { 'content-type': String(req.headers['content-type']) }).end();
    });
  });
  let url: string;
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('is protobuf by default and carries OTEL_EXPORTER_OTLP_HEADERS, percent-decoded', async () => {
    await exportOneSpan({
      OTEL_EXPORTER_OTLP_ENDPOINT: url,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=s3cr%3Dt, x-tenant=acme',
    });
    assert.equal(received.length, 1);
    assert.equal(received[0]!.headers['content-type'], 'application/x-protobuf');
    assert.equal(received[0]!.headers['x-api-key'], 's3cr=t');
    assert.equal(received[0]!.headers['x-tenant'], 'acme');
  });
});

describe('OTLP settings', () => {
  const refused = (env: NodeJS.ProcessEnv, pattern: RegExp) =>
    assert.rejects(
      startTracing({ serviceName: 'x', env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://127.0.0.1:1', ...env } }),
      pattern,
    );

  it('refuse at start a protocol, a header list or a file that cannot be used, naming the variable', async () => {
    await refused(
      { OTEL_EXPORTER_OTLP_PROTOCOL: 'udp' },
      /OTEL_EXPORTER_OTLP_PROTOCOL: must be one of http\/protobuf, http\/json, grpc/,
    );
    await refused({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'thrift' }, /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL/);
    await refused(
      { OTEL_EXPORTER_OTLP_HEADERS: 'no-equals-sign' },
      /OTEL_EXPORTER_OTLP_HEADERS: each item must be name=value/,
    );
    await refused(
      { OTEL_EXPORTER_OTLP_HEADERS: 'x-key=%zz' },
      /OTEL_EXPORTER_OTLP_HEADERS: the value of 'x-key'/,
    );
    await refused(
      { OTEL_EXPORTER_OTLP_CERTIFICATE: '/nonexistent/ca.pem' },
      /OTEL_EXPORTER_OTLP_CERTIFICATE: cannot read \/nonexistent\/ca.pem/,
    );
    await refused(
      { OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: tls.certFile },
      /OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY/,
    );
    await refused(
      {
        OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: tls.certFile,
        OTEL_EXPORTER_OTLP_CLIENT_KEY: untrustedCertificates().keyFile,
      },
      /OTEL_EXPORTER_OTLP_CLIENT_KEY: not the key/,
    );
  });
});
