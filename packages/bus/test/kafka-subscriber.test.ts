/**
 * How a subscription that is not live yet meets a consumer crash, with kafkajs' consumer replaced
 * at its seam (the timing of a real broker's group coordinator cannot be chosen): the crash kafkajs
 * reports when its retries run out on "This is not the correct coordinator for this group", seen at
 * pod start against a fresh broker (the push hub exited and its pod restarted), is tried again with
 * a new consumer; a crash that cannot pass with time still fails the start at once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import kafkajs, { type Consumer, type ConsumerConfig, type Kafka } from 'kafkajs';
import { KafkaSubscriber, type StartPolicy } from '../src/kafka-subscriber.ts';

const { KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } = kafkajs;
const topic = 'fake-topic';

function protocolError(type: string, code: number, retriable: boolean): Error {
  return new KafkaJSProtocolError(Object.assign(new Error(type), { type, code, retriable }));
}

/** Consumers whose first `crashes` runs crash with `error` instead of joining; how many were made. */
function fakeKafka(crashes: number, error: Error) {
  const made = { count: 0 };
  const kafka = {
    consumer(config: ConsumerConfig) {
      const n = ++made.count;
      const handlers = new Map<string, (e: unknown) => void>();
      const consumer = {
        events: { GROUP_JOIN: 'group-join', CRASH: 'crash' },
        on: (event: string, handler: (e: unknown) => void) => handlers.set(event, handler),
        connect: async () => {},
        subscribe: async () => {},
        disconnect: async () => {},
        run: async () => {
          setTimeout(async () => {
            if (n > crashes) {
              handlers.get('group-join')?.({ payload: { memberAssignment: { [topic]: [0] } } });
              return;
            }
            // What kafkajs decides: a crash it counts retriable restarts unless restartOnFailure says no.
            const restart = (await config.retry?.restartOnFailure?.(error)) ?? true;
            handlers.get('crash')?.({ payload: { error, restart } });
          }, 5);
        },
      };
      return consumer as unknown as Consumer;
    },
  };
  return { kafka: kafka as unknown as Kafka, made };
}

const broadcastPolicy = (): StartPolicy => {
  let group = 0;
  return {
    autoCommit: false,
    fromBeginning: false,
    restartInNewGroup: true,
    nextGroupId: () => `g-${++group}`,
    epoch: undefined,
    prepare: async () => {},
    joined: async () => {},
    isNew: () => true,
    handled: () => {},
    closed: async () => {},
  };
};

function subscriber(kafka: Kafka, errors: Error[]) {
  return new KafkaSubscriber({
    kafka,
    topic,
    handler: async () => {},
    onError: (err) => errors.push(err),
    policy: broadcastPolicy(),
    consumer: {},
    startTimeoutMs: 10_000,
    retryDelayMs: 20,
  });
}

describe('KafkaSubscriber start through consumer crashes', () => {
  it("starts after kafkajs' retries ran out on a group coordinator that was not ready yet", async () => {
    const notCoordinator = protocolError('NOT_COORDINATOR', 16, true);
    const exhausted = new KafkaJSNumberOfRetriesExceeded(notCoordinator, { retryCount: 5, retryTime: 100 });
    const { kafka, made } = fakeKafka(2, exhausted);
    const errors: Error[] = [];
    const sub = subscriber(kafka, errors);
    await sub.start();
    assert.equal(made.count, 3, 'two crashed consumers, then one that joined');
    assert.equal(errors.length, 2, 'each crash reported');
    await sub.close();
  });

  it('fails the start at once on a crash that cannot pass with time', async () => {
    const denied = protocolError('GROUP_AUTHORIZATION_FAILED', 30, false);
    const { kafka, made } = fakeKafka(1, denied);
    const sub = subscriber(kafka, []);
    const started = Date.now();
    await assert.rejects(sub.start(), /cannot subscribe to fake-topic: GROUP_AUTHORIZATION_FAILED/);
    assert.ok(Date.now() - started < 5_000, 'not held until the start deadline');
    assert.equal(made.count, 1);
  });
});
