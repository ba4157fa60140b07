/**
 * Keeps this replica's route table in step with the definitions in the Store: it reads them all at
 * start, re-reads one API when the Store announces a change of its key (a change made through any
 * replica arrives here within milliseconds), and re-reads everything every `resyncIntervalMs` in
 * case a notification was lost (a Redis reconnect). The table is rebuilt once per batch of changes.
 */
import type { Logger } from '@gatehouse/service-kit';
import type { Store } from '@gatehouse/store';
import { apiKeyPrefix, DefinitionStore, type StoredApi } from '../definitions/index.ts';
import { RouteTable } from './route-table.ts';

export interface DefinitionSyncOptions {
  store: Store;
  definitions: DefinitionStore;
  logger: Logger;
  resyncIntervalMs: number;
  env?: NodeJS.ProcessEnv;
  /** Told after every rebuild (metrics, tests). */
  onRebuild?: (table: RouteTable) => void;
}

export class DefinitionSync {
  private readonly options: DefinitionSyncOptions;
  private readonly apis = new Map<string, StoredApi>();
  private current = RouteTable.empty();
  private rebuildQueued = false;
  private changesDuringResync = 0;
  private resyncing: Promise<void> | undefined;
  private unwatch: (() => Promise<void>) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: DefinitionSyncOptions) {
    this.options = options;
  }

  get table(): RouteTable {
    return this.current;
  }

  async start(): Promise<void> {
    this.unwatch = await this.options.store.watch(apiKeyPrefix, (change) => {
      const id = DefinitionStore.idOfKey(change.key);
      if (id !== undefined) void this.refresh(id);
    });
    await this.resync();
    if (this.options.resyncIntervalMs > 0) {
      this.timer = setInterval(() => void this.resync(), this.options.resyncIntervalMs);
      this.timer.unref();
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.unwatch?.();
    this.unwatch = undefined;
  }

  /** Re-reads every definition; changes heard meanwhile trigger one more pass. */
  resync(): Promise<void> {
    this.resyncing ??= (async () => {
      try {
        do {
          this.changesDuringResync = 0;
          const apis = await this.options.definitions.list();
          this.apis.clear();
          for (const api of apis) this.apis.set(api.id, api);
          this.rebuild();
        } while (this.changesDuringResync > 0);
      } catch (err) {
        this.options.logger.warn({ err }, 'cannot read the API definitions; keeping the current ones');
      } finally {
        this.resyncing = undefined;
      }
    })();
    return this.resyncing;
  }

  /**
   * Re-reads one API; `now` rebuilds the table before resolving (the replica that made a change
   * serves it as soon as it answers), otherwise the rebuild is batched with other changes.
   */
  async refresh(id: string, now = false): Promise<void> {
    this.changesDuringResync++;
    try {
      const api = await this.options.definitions.get(id);
      if (api === undefined) this.apis.delete(id);
      else this.apis.set(id, api);
      if (now) this.rebuild();
      else this.scheduleRebuild();
    } catch (err) {
      this.options.logger.warn({ err, api: id }, 'cannot read a changed API definition; resyncing later');
    }
  }

  private scheduleRebuild(): void {
    if (this.rebuildQueued) return;
    this.rebuildQueued = true;
    setImmediate(() => {
      this.rebuildQueued = false;
      this.rebuild();
    });
  }

  private rebuild(): void {
    const { table, problems } = RouteTable.build(this.apis.values(), this.options.env);
    for (const p of problems)
      this.options.logger.error(p, 'endpoint left out on this replica: it cannot be served here');
    this.current = table;
    this.options.onRebuild?.(table);
  }
}
