/**
 * The baseline of S1 (RIG's run 1): the best plain consume loop a competent engineer writes with
 * the same Kafka client the hubs use (kafkajs, `eachBatch`, no per-record promise, nothing done with
 * a record but counting it), reading the same fan-out topic beside the replicas. Forked by
 * scenario-rig.ts; tells it when it is reading (`ready`) and when it has seen `target` records
 * (`done`, with the time and its own CPU).
 */
import { dependencyAddress } from '@gatehouse/testkit';
import { Kafka, logLevel } from 'kafkajs';

const [topic, target] = [process.argv[2]!, Number(process.argv[3])];
const kafka = new Kafka({
  brokers: dependencyAddress.kafkaBrokers,
  clientId: 'bare',
  logLevel: logLevel.NOTHING,
});
const consumer = kafka.consumer({ groupId: `bare-${topic}-${process.pid}` });
let count = 0;
let firstAt = 0;
let cpuAtFirst = 0;
const cpuSeconds = () => {
  const cpu = process.cpuUsage();
  return (cpu.user + cpu.system) / 1e6;
};
await consumer.connect();
await consumer.subscribe({ topic, fromBeginning: true });
consumer.on(consumer.events.GROUP_JOIN, () => process.send!({ type: 'ready' }));
await consumer.run({
  eachBatch: async ({ batch }) => {
    if (count === 0) {
      firstAt = Date.now();
      cpuAtFirst = cpuSeconds();
    }
    count += batch.messages.length;
    if (count >= target && count - batch.messages.length < target)
      process.send!({ type: 'done', at: Date.now(), firstAt, count, cpuSeconds: cpuSeconds() - cpuAtFirst });
  },
});
process.on('disconnect', () => {
  void consumer.disconnect().finally(() => process.exit(0));
});
