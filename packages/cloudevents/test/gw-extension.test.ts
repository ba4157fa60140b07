import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import {
  type CloudEvent,
  connectionDataFromRequest,
  correlationId,
  type GwConnectionData,
  gwExtension,
  targetPartition,
  withConnectionData,
  withCorrelation,
  withGw,
  withTargetPartition,
} from '../src/index.ts';

const base: CloudEvent = { specversion: '0.2', id: '1', type: 't', source: 's' };

describe('gw extension', () => {
  it('reads correlation and target partition, ignoring non-strings and empty strings', () => {
    const event: CloudEvent = { ...base, gw: { correlation: 'c-1', target_partition: 'user-7' } };
    assert.equal(correlationId(event), 'c-1');
    assert.equal(targetPartition(event), 'user-7');
    assert.equal(correlationId(base), undefined);
    assert.equal(targetPartition({ ...base, gw: { target_partition: '' } }), undefined);
    assert.equal(targetPartition({ ...base, gw: { target_partition: 5 as unknown as string } }), undefined);
    assert.equal(gwExtension({ ...base, gw: 'text' as never }), undefined);
  });

  it('sets keys on a copy and keeps the others', () => {
    const event: CloudEvent = { ...base, gw: { target_partition: 'p', custom: 1 } };
    const updated = withCorrelation(event, 'c-2');
    assert.deepEqual(updated.gw, { target_partition: 'p', custom: 1, correlation: 'c-2' });
    assert.deepEqual(event.gw, { target_partition: 'p', custom: 1 }, 'the original is unchanged');
    assert.deepEqual(withTargetPartition(base, 'k').gw, { target_partition: 'k' });
  });

  it('removes a key set to undefined and drops an extension left empty', () => {
    const event = withGw(base, { correlation: 'c' });
    assert.deepEqual(withGw(event, { correlation: undefined }), base);
    assert.equal('gw' in withCorrelation(event, undefined), false);
  });

  it('replaces connection data but keeps correlation and target partition', () => {
    const event: CloudEvent = {
      ...base,
      gw: { correlation: 'c', target_partition: 'p', host: 'old', query: 'old=1' },
    };
    const data: GwConnectionData = {
      remoteIp: '10.0.0.1',
      method: 'POST',
      path: '/orders',
      headers: { a: 'b' },
    };
    assert.deepEqual(withConnectionData(event, data).gw, {
      correlation: 'c',
      target_partition: 'p',
      remoteIp: '10.0.0.1',
      method: 'POST',
      path: '/orders',
      headers: { a: 'b' },
    });
  });

  it('takes connection data from a plain request', () => {
    const data = connectionDataFromRequest({
      method: 'POST',
      url: '/api/orders?id=7&x=y',
      headers: { Host: 'shop.example:8443', 'X-Trace': ['a', 'b'], 'content-type': 'application/json' },
      socket: { remoteAddress: '::ffff:192.168.1.9', encrypted: true },
    });
    assert.deepEqual(data, {
      scheme: 'https',
      method: 'POST',
      path: '/api/orders',
      query: 'id=7&x=y',
      headers: { host: 'shop.example:8443', 'x-trace': 'a, b', 'content-type': 'application/json' },
      remoteIp: '192.168.1.9',
      host: 'shop.example',
      port: 8443,
    });
  });

  it('uses the scheme default port, an empty query, and keeps real IPv6 addresses', () => {
    const data = connectionDataFromRequest({
      method: 'GET',
      url: '/x',
      headers: { host: 'shop.example' },
      socket: { remoteAddress: '2001:db8::1' },
    });
    assert.equal(data.port, 80);
    assert.equal(data.query, '');
    assert.equal(data.remoteIp, '2001:db8::1');
    assert.equal(data.scheme, 'http');
  });

  it('takes connection data from a real node:http request', async () => {
    let seen: GwConnectionData | undefined;
    const server = createServer((req, res) => {
      seen = connectionDataFromRequest(req);
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve, reject) => {
      const req = request({
        port,
        host: '127.0.0.1',
        method: 'PUT',
        path: '/a/b?c=d',
        headers: { 'X-Id': '7' },
      });
      req.on('response', (res) => res.resume().on('end', resolve));
      req.on('error', reject);
      req.end();
    });
    server.close();
    assert.equal(seen?.remoteIp, '127.0.0.1');
    assert.equal(seen?.host, '127.0.0.1');
    assert.equal(seen?.port, port);
    assert.equal(seen?.method, 'PUT');
    assert.equal(seen?.path, '/a/b');
    assert.equal(seen?.query, 'c=d');
    assert.equal(seen?.headers?.['x-id'], '7');
    assert.equal(seen?.headers?.['host'], `127.0.0.1:${port}`);
  });
});
