/** The client address behind a request: X-Forwarded-For only from trusted proxies, rightmost untrusted hop. */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { addressRanges, clientAddress } from '../src/index.ts';

const request = (peer: string, xff?: string) =>
  ({
    socket: { remoteAddress: peer },
    headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
  }) as unknown as IncomingMessage;

describe('clientAddress', () => {
  const trusted = addressRanges('test').parse('10.0.0.0/8, fd00::/8, 127.0.0.1');

  it('takes the peer address of an untrusted peer, whatever its X-Forwarded-For says', () => {
    assert.equal(clientAddress(request('198.51.100.7', '203.0.113.1'), trusted), '198.51.100.7');
    assert.equal(clientAddress(request('::ffff:198.51.100.7'), trusted), '198.51.100.7');
    assert.equal(clientAddress(request('198.51.100.7', '203.0.113.1'), undefined), '198.51.100.7');
  });

  it('takes the rightmost untrusted hop behind trusted proxies', () => {
    assert.equal(clientAddress(request('10.1.1.1', '203.0.113.1'), trusted), '203.0.113.1');
    assert.equal(
      clientAddress(request('10.1.1.1', 'spoofed, 203.0.113.9, 10.2.2.2'), trusted),
      '203.0.113.9',
    );
    assert.equal(clientAddress(request('fd00::1', '2001:db8::5'), trusted), '2001:db8::5');
    assert.equal(
      clientAddress(request('10.1.1.1', '10.3.3.3'), trusted),
      '10.3.3.3',
      'all trusted: the first',
    );
    assert.equal(clientAddress(request('10.1.1.1'), trusted), '10.1.1.1', 'no header: the peer');
  });

  it('refuses entries that are not addresses or ranges, naming them', () => {
    assert.throws(() => addressRanges('x').parse('10.0.0.0/33'), /"10.0.0.0\/33"/);
    assert.throws(() => addressRanges('x').parse('example.com'), /"example.com"/);
    assert.equal(addressRanges('x').parse(''), undefined);
  });
});
