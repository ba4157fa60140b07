// The proxy on the public edge: requests and WebSocket upgrades, the CORS it adds, its log and metrics.
export { createProxyHandler } from './proxy-handler.ts';
export { ProxyMetrics } from './proxy-metrics.ts';
export { createProxyUpgrade } from './proxy-upgrade.ts';
export { checkRequestLogSchema, createRequestLog } from './request-log.ts';
