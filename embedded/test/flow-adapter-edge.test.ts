/**
 * The Kafka flow adapter in the embedded gateway (`make run`, the public edge's process): its REST
 * engine reads a binding whose topic does not exist yet when it starts, the gateway is ready all
 * the same (it reads nothing and says so), and once the topic is made, a record in it runs its
 * flow. The flows and functions are the REST engine's test app (services/rest-engine/test/fixtures).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { KafkaBus } from '@gatehouse/bus/kafka';
import { dependencyAddress, waitFor } from '@gatehouse/testkit';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '../src/index.ts';

const app = fileURLToPath(new URL('../../services/rest-engine/test/fixtures/flow-adapter/', import.meta.url));
const topic = `fa-embedded-${randomUUID().slice(0, 8)}`;
const seen = () =>
  ((globalThis as { adapterSeen?: Array<Record<string, unknown>> }).adapterSeen ?? []).filter(
    (s) => (s['metadata'] as { topic?: string } | undefined)?.topic === topic,
  );
let gw: EmbeddedGateway;
let bus: KafkaBus;

before(async () => {
  const folder = mkdtempSync(join(tmpdir(), 'flow-adapter-edge-'));
  writeFileSync(
    join(folder, 'kafka-flow-adapter.yaml'),
    `consumer:\n  - topic: '${topic}'\n    flow: 'adapter-record-a'\n    serializer: 'json'\n`,
  );
  gw = await startEmbeddedGateway({
    ...ephemeralGatewaySettings,
    REST_CONFIG_FOLDER: app,
    YAML_KAFKA_FLOW_ADAPTER: `file:${join(folder, 'kafka-flow-adapter.yaml')}`,
    KAFKA_BROKERS: dependencyAddress.kafkaBrokers.join(','),
    KAFKA_FLOW_METADATA_REFRESH_MS: '300',
  });
  bus = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: 'flow-adapter-edge-test' });
});

after(async () => {
  await gw?.stop();
  await bus?.close();
});

describe('flow adapter in the embedded gateway', () => {
  it('is ready before its topic exists, and runs the flow of a record once it does', async () => {
    const ready = (await (await fetch(`http://127.0.0.1:${gw.apiPort}/ready`)).json()) as {
      checks: Record<string, string>;
    };
    assert.equal(ready.checks['flow-adapters'], 'ok');
    await bus.ensureTopic(topic, 1);
    await bus.publish(topic, { value: JSON.stringify({ from: 'embedded' }) });
    const [got] = await waitFor(() => (seen().length > 0 ? seen() : undefined), {
      timeoutMs: 20_000,
      what: 'the record in its flow',
    });
    assert.deepEqual(got!['body'], { from: 'embedded' });
  });
});
