import { uniqueName } from '@gatehouse/testkit';
import { MemoryBus } from '../src/index.ts';
import { busContract } from './bus-contract.ts';

busContract({
  name: 'memory',
  createBus: async () => new MemoryBus(),
  newTopic: async () => uniqueName('topic'),
});
