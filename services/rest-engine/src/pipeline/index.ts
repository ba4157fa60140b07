// The request pipeline: one stage per file from routing to the answer, and the metrics it counts.
export { requestHandler } from './request-pipeline.ts';
export { RestMetrics } from './rest-metrics.ts';
