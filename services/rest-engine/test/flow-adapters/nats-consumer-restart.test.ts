/**
 * A JetStream binding whose consumer is deleted out from under a running engine (an operator, a
 * stream re-provisioned): the engine runs as its own process, /ready turns 503, the binding makes its
 * consumer again after the restart backoff, /ready turns 200, a message published afterwards runs
 * its flow, and the restart is counted in gw_flow_adapter_consumer_restarts_total.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { dependencyAddress, type ServiceProcess, waitFor } from '@gatehouse/testkit';
import { type CountingSink, startCountingSink, startEngineProcess } from './engine-process.ts';
import { adapterFile } from './kafka-fixture.ts';

const id = randomUUID().slice(0, 8);
const stream = `FA_RESTART_${id}`;
const subject = `fa.${id}.restart`;
const queue = `restart-${id}`;
let nc: NatsConnection;
let sink: CountingSink;
let engine: ServiceProcess | undefined;

const readiness = async () => (await fetch(`${engine!.apiUrl}/ready`)).status;

before(async () => {
  nc = await connect({ servers: dependencyAddress.natsUrl });
  await (await jetstreamManager(nc)).streams.add({ name: stream, subjects: [subject] });
  sink = await startCountingSink();
  const file = adapterFile(
    'nats-flow-adapter.yaml',
    `consumer:\n  - subject: '${subject}'\n    stream: '${stream}'\n    queue: '${queue}'\n    flow: 'adapter-sink'\n    serializer: 'json'\n`,
  );
  engine = await startEngineProcess(sink.url, {
    YAML_NATS_FLOW_ADAPTER: file,
    NATS_SERVERS: dependencyAddress.natsUrl,
    PAUSE_MS: '1',
  });
});

after(async () => {
  await engine?.stop(5000).catch(() => undefined);
  await sink?.close();
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
    await waitFor(() => sink.arrivals.has('after-restart') || undefined, {
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
