// The session blacklist as the hub reads it: kills looked up after a cut store watch, the count.
export { blacklistCounter } from './blacklist-count.ts';
export { KillRescan } from './kill-rescan.ts';
