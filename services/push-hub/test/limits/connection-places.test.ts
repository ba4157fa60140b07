import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConnectionPlaces } from '../../src/limits/connection-places.ts';

describe('ConnectionPlaces', () => {
  it('refuses past the address cap with 429 and past the replica cap with 503, both with Retry-After', () => {
    const places = new ConnectionPlaces({ perAddress: 2, perReplica: 3 });
    assert.equal(places.take({}, '192.0.2.1'), undefined);
    assert.equal(places.take({}, '192.0.2.1'), undefined);
    const capped = places.take({}, '192.0.2.1');
    assert.equal(capped?.status, 429);
    assert.equal(capped?.reason, 'at_capacity');
    assert.match(capped?.headers['retry-after'] ?? '', /^[1-9]\d*$/);
    assert.equal(places.take({}, '192.0.2.2'), undefined);
    const full = places.take({}, '192.0.2.3');
    assert.equal(full?.status, 503);
    assert.match(full?.headers['retry-after'] ?? '', /^[1-9]\d*$/);
    assert.equal(places.count(), 3, 'refusals hold nothing');
  });

  it('gives a place back once, however often it is released, and counts an owner once', () => {
    const places = new ConnectionPlaces({ perAddress: 1, perReplica: 10 });
    const owner = {};
    assert.equal(places.take(owner, '192.0.2.1'), undefined);
    assert.equal(places.take(owner, '192.0.2.1'), undefined, 'the owner holds it already');
    places.release(owner);
    places.release(owner);
    assert.equal(places.count('192.0.2.1'), 0);
    assert.equal(places.take({}, '192.0.2.1'), undefined);
    assert.equal(places.take({}, '192.0.2.1')?.status, 429, 'released twice, given back once');
  });

  it('hands a place to a new owner (a handshake to its session)', () => {
    const places = new ConnectionPlaces({ perAddress: 5, perReplica: 5 });
    const handshake = {};
    const session = {};
    places.take(handshake, '192.0.2.1');
    assert.equal(places.move(handshake, session), true);
    places.release(handshake);
    assert.equal(places.count('192.0.2.1'), 1, 'the old owner no longer holds it');
    places.release(session);
    assert.equal(places.count(), 0);
    assert.equal(places.move(handshake, session), false);
  });

  it('counts IPv6 clients per /64 and IPv4-mapped addresses as IPv4', () => {
    const places = new ConnectionPlaces({ perAddress: 1, perReplica: 10 });
    places.take({}, '2001:db8:1:2::1');
    assert.equal(places.take({}, '2001:db8:1:2:ffff::9')?.status, 429, 'the same /64');
    assert.equal(places.take({}, '2001:db8:1:3::1'), undefined, 'another /64');
    places.take({}, '192.0.2.7');
    assert.equal(places.take({}, '::ffff:192.0.2.7')?.status, 429);
  });

  it('lets a lazy holder give back what it no longer holds before it counts', () => {
    const places = new ConnectionPlaces({ perAddress: 1, perReplica: 10 });
    places.take('long-poll-1', '192.0.2.1');
    let stale = false;
    places.sweepWith(() => {
      if (stale) places.release('long-poll-1');
    });
    assert.equal(places.take('long-poll-2', '192.0.2.1')?.status, 429);
    stale = true;
    assert.equal(places.take('long-poll-2', '192.0.2.1'), undefined);
  });
});
