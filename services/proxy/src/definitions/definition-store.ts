/**
 * API definitions in the shared Store (Redis in production), one key per API (`proxy:api:<id>`),
 * so every replica serves the same set and a change survives restarts (RIG kept them in memory
 * only and lost runtime changes when all nodes stopped).
 *
 * PROXY_CONFIG_FILE seeds the store. To keep runtime changes across restarts without ignoring a
 * changed file, each seeded API remembers the hash of the file's version (`proxy:seed:<id>`): at
 * start an API is written from the file only when the file's version differs from the one seeded
 * last. So an API changed or deleted through the API stays so until the file itself changes it.
 *
 * Concurrent writes of the same id: create is atomic (set-if-absent); update and delete are
 * last-writer-wins.
 */
import { createHash } from 'node:crypto';
import type { Store } from '@gatehouse/store';
import type { ApiDefinition, StoredApi } from './api-definition.ts';

export const apiKeyPrefix = 'proxy:api:';
const seedKeyPrefix = 'proxy:seed:';

export type SeedOutcome = 'written' | 'unchanged';

export class DefinitionStore {
  private readonly store: Store;
  private readonly now: () => Date;

  constructor(store: Store, now: () => Date = () => new Date()) {
    this.store = store;
    this.now = now;
  }

  async list(): Promise<StoredApi[]> {
    const keys = await this.store.keys(apiKeyPrefix);
    const apis = await Promise.all(keys.map((key) => this.read(key)));
    return apis.filter((a) => a !== undefined).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  get(id: string): Promise<StoredApi | undefined> {
    return this.read(apiKeyPrefix + id);
  }

  /** Resolves false when an API with this id exists. */
  create(api: ApiDefinition): Promise<boolean> {
    return this.store.set(apiKeyPrefix + api.id, JSON.stringify(this.stored(api, 0)), { ifAbsent: true });
  }

  async update(api: ApiDefinition, previous: StoredApi): Promise<void> {
    await this.store.set(apiKeyPrefix + api.id, JSON.stringify(this.stored(api, previous.ref_number + 1)));
  }

  /** Resolves false when there was no such API. */
  delete(id: string): Promise<boolean> {
    return this.store.delete(apiKeyPrefix + id);
  }

  /** Writes the file's version of an API unless that very version was seeded before. */
  async seed(api: ApiDefinition): Promise<SeedOutcome> {
    const hash = createHash('sha256').update(JSON.stringify(api)).digest('base64url');
    if ((await this.store.get(seedKeyPrefix + api.id)) === hash) return 'unchanged';
    const previous = await this.get(api.id);
    await this.store.set(
      apiKeyPrefix + api.id,
      JSON.stringify(this.stored(api, (previous?.ref_number ?? -1) + 1)),
    );
    await this.store.set(seedKeyPrefix + api.id, hash);
    return 'written';
  }

  /** The id of a key this store wrote, or undefined for another key. */
  static idOfKey(key: string): string | undefined {
    return key.startsWith(apiKeyPrefix) ? key.slice(apiKeyPrefix.length) : undefined;
  }

  private async read(key: string): Promise<StoredApi | undefined> {
    const text = await this.store.get(key);
    return text === undefined ? undefined : (JSON.parse(text) as StoredApi);
  }

  private stored(api: ApiDefinition, refNumber: number): StoredApi {
    return { ...api, active: true, ref_number: refNumber, timestamp: this.now().toISOString() };
  }
}
