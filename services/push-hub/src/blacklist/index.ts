// The session blacklist as the hub reads it: kills looked up after a cut store watch, kills heard
// lately (for connects admitted meanwhile), the count.
export { blacklistCounter } from './blacklist-count.ts';
export { KillRescan } from './kill-rescan.ts';
export { RecentKills, type RecentKillsOptions } from './recent-kills.ts';
