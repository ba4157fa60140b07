/**
 * A JetStream binding whose consumer is deleted out from under a running engine (an operator, a
 * stream re-provisioned): the engine runs as its own process, /ready turns 503, the binding makes its
 * consumer again after the restart backoff, /ready turns 200, a message published afterwards runs
 * its flow, and the restart is counted in gw_flow_adapter_consumer_restarts_total.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { dependencyAddress, type ServiceProcess, spawnService, waitFor } from '@gatehouse/testkit';
import { freePort } from '../engine-fixture.ts';
import { adapterFile, fixtureApp } from './kafka-fixture.ts';

const id = randomUUID().slice(0, 8);
const stream = `FA_RESTART_${id}`;
const subject = `fa.${id}.restart`;
const queue = `restart-${id}`;
const arrived: string[] = [];
let nc: NatsConnection;
let sink: Server;
let engine: ServiceProcess | undefined;

const readiness = async () => (await fetch(`${engine!.apiUrl}/ready`)).status;

before(async () => {
  nc = await connect({ servers: dependencyAddress.natsUrl });
  await (await jetstreamManager(nc)).streams.add({ name: stream, subjects: [subject] });
  sink = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      arrived.push((JSON.parse(Buffer.concat(chunks).toString()) as { id: string }).id);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const file = adapterFile(
    'nats-flow-adapter.yaml',
    `consumer:\n  - subject: '${subject}'\n    stream: '${stream}'\n    queue: '${queue}'\n    flow: 'adapter-sink'\n    serializer: 'json'\n`,
  );
  engine = await spawnService({
    entry: 'services/rest-engine/src/main.ts',
    env: {
      LOG_LEVEL: 'warn',
      REST_CONFIG_FOLDER: fixtureApp,
      REST_SERVER_PORT: String(await freePort()),
      YAML_NATS_FLOW_ADAPTER: file,
      NATS_SERVERS: dependencyAddress.natsUrl,
      SINK_URL: `http://127.0.0.1:${(sink.address() as AddressInfo).port}/`,
      PAUSE_MS: '1',
    },
  });
});

after(async () => {
  await engine?.stop(5000).catch(() => undefined);
  await new Promise((resolve) => sink?.close(resolve));
  await jetstreamManager(nc)
    .then((jsm) => jsm.streams.delete(stream))
    .catch(() => undefined);
  await nc?.close();
});

describe('NATS flow adapter consumer restart', () => {
  it('makes a deleted JetStream consumer again, not ready meanwhile, and runs what comes after', async () => {
    await waitFor(async () => (await readiness()) === 200, { timeoutMs: 10_000, what: 'ready at start' });
    await (await jetstreamManager(nc)).consumers.delete(stream, queue);
    await waitFor(async () => (await readiness()) === 503, {
      timeoutMs: 10_000,
      intervalMs: 10,
      what: 'not ready once the consumer is gone',
    });
    await waitFor(async () => (await readiness()) === 200, { timeoutMs: 15_000, what: 'ready again' });
    await jetstream(nc).publish(subject, JSON.stringify({ id: 'after-restart' }));
    await waitFor(() => arrived.includes('after-restart') || undefined, {
      timeoutMs: 10_000,
      what: 'the flow run of a message published after the restart',
    });
    const metrics = await (await fetch(`${engine!.apiUrl}/metrics`)).text();
    const restarts = metrics
      .split('\n')
      .find((l) => l.startsWith('gw_flow_adapter_consumer_restarts_total{'));
    assert.match(restarts ?? 'none', /binding="nats:[^"]+".* [1-9]\d*$/, 'the restart is counted');
  });
});
