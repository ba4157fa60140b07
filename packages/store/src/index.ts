export * from './memory-store.ts';
export * from './store.ts';
