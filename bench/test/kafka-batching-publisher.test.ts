import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { dependencyAddress, uniqueName } from '@gatehouse/testkit';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { kafkaBatchingPublisher } from '../src/baselines/kafka-batching-publisher.ts';

// The raw side of the bus benchmark must batch like the adapter, or the ratio measures batching.
const kafka = new Kafka({
  brokers: dependencyAddress.kafkaBrokers,
  clientId: 'bench-test',
  logLevel: logLevel.NOTHING,
});
let producer: Producer;
const produceRequests: number[] = [];

before(async () => {
  producer = kafka.producer();
  producer.on(producer.events.REQUEST, ({ payload }) => {
    if (payload.apiName === 'Produce') produceRequests.push(Date.now());
  });
  await producer.connect();
});
after(() => producer.disconnect());

it('sends concurrent publishes in few requests of at most the batch size, each acknowledged', async () => {
  const topic = uniqueName('bench-batch');
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  try {
    const publish = kafkaBatchingPublisher(producer, 100);
    produceRequests.length = 0;
    await Promise.all(Array.from({ length: 1000 }, (_, i) => publish(topic, { value: `m${i}` })));
    // 1000 publishes made in one tick: the first request takes what the tick queued, ≤ 100 each.
    assert.ok(
      produceRequests.length >= 10,
      `${produceRequests.length} produce requests for 1000 messages of ≤ 100`,
    );
    assert.ok(produceRequests.length <= 12, `${produceRequests.length} produce requests: not batched`);
    const [offsets] = await admin.fetchTopicOffsets(topic).then((o) => [o[0]!]);
    assert.equal(offsets.high, '1000');
  } finally {
    await admin.deleteTopics({ topics: [topic] });
    await admin.disconnect();
  }
});
