import { MemoryStore } from '../src/index.ts';
import { storeContract } from './store-contract.ts';

storeContract({
  name: 'memory',
  createStore: async () => new MemoryStore(),
  // One process, one map: the store itself is the only handle on its backend.
  openPeer: async (store) => store,
});
