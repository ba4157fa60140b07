export * from './bus.ts';
export * from './memory-bus.ts';
