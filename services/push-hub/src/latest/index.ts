// Latest value on subscribe: the newest event per type and per extractor field value, in the store.
export { type LatestSettings, type LatestValue, LatestValues } from './latest-values.ts';
