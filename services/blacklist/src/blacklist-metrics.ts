/**
 * The blacklist service's Prometheus metrics (prefix gw_):
 * - `gw_blacklist_entries`: sessions blacklisted now, counted in the store (the same number on
 *   every replica). Counting is a key scan, so it runs only when a scrape asks for the gauge, and
 *   only when a blacklist change was heard since the last count or the count is older than
 *   BLACKLIST_COUNT_MAX_AGE (expiries the store did not announce). No scrape, no scan.
 * - `gw_blacklist_additions_total{version, outcome}`: POSTs that blacklisted a session, by API
 *   version and outcome (added, extended, kept).
 * Kills are counted where they happen: the push hub's `gw_session_kills_total` (connections closed).
 */
import { type Counter, type Gauge, type Registry, counter, gauge } from '@gatehouse/service-kit';
import type { AddOutcome } from './session-blacklist.ts';

export interface BlacklistMetricsOptions {
  /** Counts the entries in the store. */
  count: () => Promise<number>;
  /** How old a count may get before a scrape recounts although nothing changed. */
  maxAgeMs: number;
  /** Hears a failed count; the gauge keeps its last value. */
  onError?: (err: Error) => void;
  now?: () => number;
}

export class BlacklistMetrics {
  private readonly additions: Counter<'version' | 'outcome'>;
  private readonly entries: Gauge;
  private readonly options: BlacklistMetricsOptions;
  private readonly now: () => number;
  private changed = true;
  private countedAt = Number.NEGATIVE_INFINITY;
  private counting: Promise<void> | undefined;

  constructor(registry: Registry, options: BlacklistMetricsOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.additions = counter(registry, {
      name: 'gw_blacklist_additions_total',
      help: 'Sessions blacklisted through the API, by version and outcome (added, extended, kept)',
      labelNames: ['version', 'outcome'],
    });
    this.entries = gauge(registry, {
      name: 'gw_blacklist_entries',
      help: 'Sessions blacklisted now (entries in the store)',
      collect: () => this.refresh(),
    });
  }

  entryAdded(version: string, outcome: AddOutcome): void {
    this.additions.inc({ version, outcome });
  }

  /** An entry was written, deleted or expired somewhere: the next scrape recounts. */
  blacklistChanged(): void {
    this.changed = true;
  }

  /** Recounts when needed; concurrent scrapes share one count. */
  refresh(): Promise<void> {
    if (!this.changed && this.now() - this.countedAt < this.options.maxAgeMs) return Promise.resolve();
    this.counting ??= this.recount().finally(() => {
      this.counting = undefined;
    });
    return this.counting;
  }

  private async recount(): Promise<void> {
    // Cleared before the scan: a change heard during it makes the next scrape count again.
    this.changed = false;
    try {
      this.entries.set(await this.options.count());
      this.countedAt = this.now();
    } catch (err) {
      this.changed = true;
      this.options.onError?.(err as Error);
    }
  }
}
