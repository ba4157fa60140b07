import { uniqueName } from '@gatehouse/testkit';
import { MemoryBus } from '../src/index.ts';
import { busContract } from './bus-contract.ts';

let bus: MemoryBus | undefined;

busContract({
  name: 'memory',
  createBus: async () => {
    bus = new MemoryBus();
    return bus;
  },
  newTopic: async () => uniqueName('topic'),
  expireThrough: async (topic, position) => bus!.trim(topic, position),
  beyond: (position) => String(Number(position) + 1000),
  reportsLiveAfter: true,
});
