export * from './box.ts';
export * from './interleave.ts';
export * from './proc.ts';
export * from './spawn-pinned.ts';
export * from './stats.ts';
export * from './wrk.ts';
export * from './redis-commands.ts';
