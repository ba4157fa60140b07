import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRedisUrl } from '../src/redis-url.ts';

describe('redis URL', () => {
  it('reads one node, with the defaults', () => {
    assert.deepEqual(parseRedisUrl('redis://cache'), {
      nodes: [{ host: 'cache', port: 6379 }],
      username: undefined,
      password: undefined,
      tls: false,
      db: 0,
    });
  });

  it('reads several nodes, credentials, TLS and a database', () => {
    assert.deepEqual(parseRedisUrl('rediss://gw:p%40ss:w@10.0.0.1:7000, 10.0.0.2:7001,[::1]:7002/0'), {
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
        { host: '::1', port: 7002 },
      ],
      username: 'gw',
      password: 'p@ss:w',
      tls: true,
      db: 0,
    });
    assert.equal(parseRedisUrl('redis://:secret@a:1/3').password, 'secret');
    assert.equal(parseRedisUrl('redis://:secret@a:1/3').username, undefined);
    assert.equal(parseRedisUrl('redis://a:1/3').db, 3);
  });

  it('refuses what is not a redis URL, without showing the password', () => {
    assert.throws(() => parseRedisUrl('http://a:1'), /not a redis URL/);
    assert.throws(
      () => parseRedisUrl('redis://u:hunter2@a:1,b:x'),
      (err: Error) => {
        assert.match(err.message, /not a host\[:port\]/);
        assert.doesNotMatch(err.message, /hunter2/);
        return true;
      },
    );
  });
});
