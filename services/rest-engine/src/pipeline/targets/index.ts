// What answers a request: a function, a flow, the relay or static content.
export { runStaticTarget } from './static-target.ts';
export { targetOf } from './target-of.ts';
export type { Target, TargetCall } from './target.ts';
