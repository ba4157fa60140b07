import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KafkaTopicLayouts, type TopicLayout, topicLayout } from '../src/kafka-topic-layouts.ts';

function counting(layout: TopicLayout = { partitionCount: 2, available: [0, 1] }) {
  const fetched: string[] = [];
  let now = 0;
  const layouts = new KafkaTopicLayouts({
    fetch: async (topic) => {
      fetched.push(topic);
      return layout;
    },
    maxAgeMs: 1_000,
    now: () => now,
  });
  const advance = (ms: number) => {
    now += ms;
  };
  return { layouts, fetched, advance };
}

describe('kafka topic layouts', () => {
  it('fetches a topic once and shares the fetch between concurrent callers', async () => {
    const { layouts, fetched } = counting();
    const [a, b] = await Promise.all([layouts.get('t'), layouts.get('t')]);
    assert.equal(a, b);
    await layouts.get('t');
    await layouts.get('u');
    assert.deepEqual(fetched, ['t', 'u']);
  });

  it('fetches again after invalidate, invalidateAll or the maximum age', async () => {
    const { layouts, fetched, advance } = counting();
    await layouts.get('t');
    layouts.invalidate('t');
    await layouts.get('t');
    layouts.invalidateAll();
    await layouts.get('t');
    advance(999);
    await layouts.get('t');
    advance(1);
    await layouts.get('t');
    assert.deepEqual(fetched, ['t', 't', 't', 't']);
  });

  it('does not keep a failed fetch or a topic that does not exist yet', async () => {
    const answers: Array<() => TopicLayout | undefined> = [
      () => {
        throw new Error('no broker');
      },
      () => undefined,
      () => ({ partitionCount: 1, available: [0] }),
    ];
    const layouts = new KafkaTopicLayouts({ fetch: async () => answers.shift()!() });
    await assert.rejects(layouts.get('t'), /no broker/);
    assert.equal(await layouts.get('t'), undefined);
    assert.deepEqual(await layouts.get('t'), { partitionCount: 1, available: [0] });
    assert.deepEqual(await layouts.get('t'), { partitionCount: 1, available: [0] }, 'kept now');
    assert.equal(answers.length, 0);
  });

  it('counts every partition and lists the ones with a leader', () => {
    const layout = topicLayout('t', [
      { partitionId: 2, leader: 1 },
      { partitionId: 0, leader: 1 },
      { partitionId: 1, leader: -1 },
    ]);
    assert.deepEqual(layout, { partitionCount: 3, available: [0, 2] });
    assert.throws(() => topicLayout('t', []), /has no partitions/);
  });
});
