import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { uniqueName } from '@gatehouse/testkit';
import { MemoryBus } from '../src/all.ts';
import { busContract } from './bus-contract.ts';

let bus: MemoryBus | undefined;
/** A position's sequence number, without its epoch. */
const seqOf = (position: string) => position.split('.')[0]!;

busContract({
  name: 'memory',
  createBus: async () => {
    bus = new MemoryBus();
    return bus;
  },
  newTopic: async () => uniqueName('topic'),
  expireThrough: async (topic, position) => bus!.trim(topic, position),
  beyond: (position) => {
    const [seq, epoch] = position.split('.');
    return `${Number(seq) + 1000}.${epoch}`;
  },
  reportsLiveAfter: true,
  deleteTopic: (topic) => bus!.deleteTopic(topic),
});

/**
 * `make run` keeps its events in this bus: bounded by bytes as well as by count, or 10,000 events of
 * 1 MiB each (what the publisher accepts) would hold 10 GiB.
 */
describe('memory bus retention', () => {
  it('keeps at most retentionBytes of a topic, dropping the oldest first', async () => {
    const memory = new MemoryBus({ retentionBytes: 8 * 1024 * 1024 });
    const topic = uniqueName('bytes');
    const mib = Buffer.alloc(1024 * 1024, 'x');
    let last = '';
    for (let i = 0; i < 100; i++) last = await memory.publish(topic, { value: mib });
    const replayed: string[] = [];
    const sub = await memory.subscribe(topic, (m) => void replayed.push(seqOf(m.position)), { last: 1000 });
    await new Promise((r) => setTimeout(r, 50));
    await sub.close();
    // The newest 8 fill the 8 MiB; the 92 before them are gone.
    assert.deepEqual(replayed, ['93', '94', '95', '96', '97', '98', '99', '100']);
    await assert.rejects(
      memory.subscribe(topic, () => {}, { from: `50.${memory.positionEpoch(last)}` }),
      (err: Error) => err.name === 'PositionUnavailableError',
    );
    await memory.close();
  });

  it('keeps the newest message even when it alone is larger than the bound', async () => {
    const memory = new MemoryBus({ retentionBytes: 1024 });
    const topic = uniqueName('bytes');
    await memory.publish(topic, { value: Buffer.alloc(4096) });
    const got: string[] = [];
    const sub = await memory.subscribe(topic, (m) => void got.push(seqOf(m.position)), { last: 10 });
    await new Promise((r) => setTimeout(r, 20));
    await sub.close();
    assert.deepEqual(got, ['1']);
    await memory.close();
  });
});
