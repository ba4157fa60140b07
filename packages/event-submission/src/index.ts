export * from './fanout-record.ts';
export * from './reserved-event.ts';
export * from './source-claim.ts';
export * from './submission-check.ts';
export * from './submission-config.ts';
export * from './submitted-event.ts';
export * from './wrapped-source.ts';
