/** A memory store whose notifications can be lost (`muted`, as while a watch reconnects), and that can tell of a resync. */
import { type ChangeListener, MemoryStore } from '@gatehouse/store';

export class WatchCutStore extends MemoryStore {
  muted = false;
  private readonly watchers: Array<{ prefix: string; listener: ChangeListener }> = [];

  override watch(prefix: string, listener: ChangeListener) {
    this.watchers.push({ prefix, listener });
    return super.watch(prefix, (change) => {
      if (!this.muted) listener(change);
    });
  }

  /** The watch listens again after it was cut off. */
  resync(): void {
    for (const { prefix, listener } of this.watchers) listener({ key: prefix, kind: 'resync' });
  }
}
