import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '@gatehouse/service-kit';
import { pushHubConfig } from '../src/config.ts';

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));

describe('push hub settings', () => {
  it('refuses HEARTBEAT_INTERVAL=0 at start, exit 2, naming the variable and the lower bound', () => {
    const run = spawnSync(process.execPath, [main], {
      env: {
        PATH: process.env.PATH,
        HEARTBEAT_INTERVAL: '0',
        TOKEN_SECRET: 'push-hub-config-test-secret',
        // Never reached: the settings are read before anything connects.
        REDIS_URL: 'redis://127.0.0.1:1',
      },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(run.status, 2, run.stderr);
    assert.match(
      run.stderr,
      /HEARTBEAT_INTERVAL: must be at least 100ms, got 0ms \(a bare number is milliseconds\)/,
    );
  });

  it('bounds every interval below, with 0 accepted only where it means "no delay"', () => {
    const refused = (env: Record<string, string>) =>
      assert.throws(() => loadConfig(pushHubConfig, env), ConfigError, JSON.stringify(env));
    for (const name of [
      'HEARTBEAT_INTERVAL',
      'LONGPOLL_TIMEOUT',
      'LONGPOLL_SESSION_TTL',
      'CONNECTION_TOKEN_TTL',
      'CONTROL_REQUEST_TIMEOUT',
      'SUBSCRIPTION_CHECK_TIMEOUT',
    ])
      for (const value of ['0', '1', '1ms']) refused({ [name]: value });
    refused({ LONGPOLL_TIMEOUT: '1h' });
    assert.equal(loadConfig(pushHubConfig, { DRAIN_RECONNECT_JITTER: '0' }).DRAIN_RECONNECT_JITTER, 0);
    assert.equal(loadConfig(pushHubConfig, { HEARTBEAT_INTERVAL: '100ms' }).HEARTBEAT_INTERVAL, 100);
  });

  it('bounds what connections hold by default: a long-poll session a minute after its last poll, 100 connections per address, 20,000 per replica', () => {
    const config = loadConfig(pushHubConfig, {});
    assert.equal(config.LONGPOLL_SESSION_TTL, 60_000);
    assert.equal(config.MAX_CONNECTIONS_PER_ADDRESS, 1000);
    assert.equal(config.MAX_CONNECTIONS, 20_000);
    // New connections per minute across the replicas (the specification's default).
    assert.equal(config.MAX_CONNECTIONS_PER_MINUTE, 5000);
    for (const name of ['MAX_CONNECTIONS_PER_ADDRESS', 'MAX_CONNECTIONS'])
      assert.throws(() => loadConfig(pushHubConfig, { [name]: '0' }), ConfigError, name);
  });
});
