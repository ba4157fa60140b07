/**
 * The replicas listening on one control channel (replica-channel.ts), kept in the shared store:
 *
 * - `replicas:<channel>live:<id>`: a live replica, with a TTL its heartbeat renews. Only a replica
 *   found here is sent requests, so a token or correlation id naming any other (forged, or from a
 *   replica long gone) costs no stream.
 * - `replicas:<channel>streams`: every replica that made a stream and has not deleted it yet, so
 *   that a live replica can delete the stream of one that died without leaving (its live key
 *   expired), without scanning the broker.
 *
 * A replica writes its live key before it lists itself, so a listed replica without a live key is
 * dead, or was cut off from the store for a whole TTL: it joins again at every heartbeat, which
 * puts back whatever a live replica removed meanwhile.
 */
import type { Store } from '@gatehouse/store';

export class ReplicaRegistry {
  private readonly store: Store;
  private readonly prefix: string;
  readonly ttlSeconds: number;

  constructor(options: { store: Store; channel: string; ttlSeconds: number }) {
    this.store = options.store;
    this.prefix = `replicas:${options.channel}`;
    this.ttlSeconds = options.ttlSeconds;
  }

  /** Marks `replica` live (again, at each heartbeat) and lists it among the replicas with a stream. */
  async join(replica: string): Promise<void> {
    await this.store.set(this.liveKey(replica), '1', { ttlSeconds: this.ttlSeconds });
    const listed = await this.store.list(this.streamsKey);
    if (!listed.includes(replica)) await this.store.append(this.streamsKey, replica);
  }

  isLive(replica: string): Promise<boolean> {
    return this.store.exists(this.liveKey(replica));
  }

  /** No longer live: requests for it are answered "gone" at once. */
  async leave(replica: string): Promise<void> {
    await this.store.delete(this.liveKey(replica));
  }

  /**
   * Its stream is deleted: it is no longer listed. True for the one caller that unlisted it (of
   * several live replicas reaping the same dead one at once).
   */
  async forget(replica: string): Promise<boolean> {
    return (await this.store.removeItems(this.streamsKey, [replica])) > 0;
  }

  /** Listed replicas whose live key is there: those a request to every replica goes to. */
  async live(): Promise<string[]> {
    const listed = await this.store.list(this.streamsKey);
    const live = await Promise.all(listed.map((r) => this.isLive(r)));
    return listed.filter((_, i) => live[i]);
  }

  /** Listed replicas whose live key is gone: their streams are left over. */
  async dead(): Promise<string[]> {
    const listed = await this.store.list(this.streamsKey);
    const live = await Promise.all(listed.map((r) => this.isLive(r)));
    return listed.filter((_, i) => !live[i]);
  }

  private liveKey(replica: string): string {
    return `${this.prefix}live:${replica}`;
  }

  private get streamsKey(): string {
    return `${this.prefix}streams`;
  }
}
