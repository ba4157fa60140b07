/**
 * The raw Kafka side of bus-throughput.bench.ts: the fair floor for the Kafka adapter's publish.
 * The adapter batches concurrent publishes (one produce request in flight per topic, at most 500
 * messages per request); a raw client that sent one request per message would make the ratio
 * measure batching instead of the adapter's overhead (issue 16: it read 7.43×). So this does what
 * a competent kafkajs user does for many small concurrent publishes, with the same limits.
 */
import type { Message, Producer } from 'kafkajs';

/**
 * What a kafkajs user writes to publish many small messages fast: publishes queue per topic, one
 * `sendBatch` per topic in flight, at most `maxMessages` messages in one request; a
 * publish resolves when the request carrying it was acknowledged.
 */
export function kafkaBatchingPublisher(
  producer: Producer,
  maxMessages: number,
): (topic: string, message: Message) => Promise<void> {
  const queues = new Map<string, Array<{ message: Message; done: (err?: unknown) => void }>>();
  const drain = async (topic: string, queue: Array<{ message: Message; done: (err?: unknown) => void }>) => {
    try {
      while (queue.length > 0) {
        const batch = queue.splice(0, maxMessages);
        try {
          await producer.sendBatch({
            acks: -1,
            topicMessages: [{ topic, messages: batch.map((p) => p.message) }],
          });
          for (const p of batch) p.done();
        } catch (err) {
          for (const p of batch) p.done(err);
        }
      }
    } finally {
      queues.delete(topic);
    }
  };
  return (topic, message) =>
    new Promise<void>((resolve, reject) => {
      const entry = { message, done: (err?: unknown) => (err ? reject(err) : resolve()) };
      const queue = queues.get(topic);
      if (queue) {
        queue.push(entry);
        return;
      }
      const fresh = [entry];
      queues.set(topic, fresh);
      // After the current microtasks, like the adapter: publishes of the same tick join the request.
      void Promise.resolve().then(() => drain(topic, fresh));
    });
}
