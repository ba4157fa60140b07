/**
 * Broker targets are off until configured: a proxy started with no KAFKA_BROKERS, no
 * PROXY_KINESIS_ENABLED and no NATS_SERVERS (the defaults) still loads API definitions that target
 * Kafka, Kinesis and NATS, and answers their requests 503 naming the target, with or without
 * response_from: the request is not lost in a broker client that was never started.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ProxyProcess, startProxy } from './proxy-process.ts';

const brokerSettings = [
  'KAFKA_BROKERS',
  'PROXY_KINESIS_ENABLED',
  'KINESIS_ENDPOINT',
  'NATS_SERVERS',
  'PROXY_KAFKA_RESPONSE_TOPICS',
  'PROXY_KINESIS_RESPONSE_STREAMS',
];

const endpoint = (id: string, target: string, more: Record<string, unknown> = {}) => ({
  id,
  method: 'POST',
  path_regex: `/${id}`,
  target,
  topic: `${id}-topic`,
  ...more,
});

let proxy: ProxyProcess;

before(async () => {
  // The defaults: none of the broker settings in the environment at all.
  for (const name of brokerSettings) delete process.env[name];
  proxy = await startProxy(
    {
      STORE: 'memory',
      CONTROL_BUS: 'memory',
      PROXY_CONFIG_FILE: JSON.stringify([
        {
          id: 'brokers',
          name: 'brokers',
          version_data: {
            default: {
              endpoints: [
                endpoint('kafka-publish', 'kafka'),
                endpoint('kafka-wait', 'kafka', { response_from: 'http_async' }),
                endpoint('kinesis-publish', 'kinesis'),
                endpoint('nats-publish', 'nats'),
                endpoint('nats-request', 'nats', { response_from: 'nats' }),
              ],
            },
          },
          proxy: { target_url: '127.0.0.1', port: 9 },
        },
      ]),
    },
    60_000,
  );
});

after(async () => {
  await proxy?.stop();
});

describe('broker targets off by default', () => {
  for (const [path, target] of [
    ['kafka-publish', 'kafka'],
    ['kafka-wait', 'kafka'],
    ['kinesis-publish', 'kinesis'],
    ['nats-publish', 'nats'],
    ['nats-request', 'nats'],
  ] as const)
    it(`answers /${path} 503 naming the ${target} target`, async () => {
      const res = await fetch(`${proxy.publicUrl}/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ specversion: '1.0', id: path, type: 't', source: '/s' }),
      });
      assert.equal(res.status, 503);
      assert.equal(await res.text(), `The ${target} target is not configured on this gateway.`);
    });

  it('started no broker client (its readiness checks none)', async () => {
    const ready = await fetch(`${proxy.apiUrl}/ready`);
    assert.equal(ready.status, 200);
    assert.doesNotMatch(await ready.text(), /kafka|kinesis|nats/i);
  });
});
