/** A small typed event emitter (no dependency on node:events, so it runs in browsers). */
export class Emitter<Events extends Record<string, unknown[]>> {
  private readonly listeners: { [K in keyof Events]?: Set<(...args: Events[K]) => void> } = {};

  on<K extends keyof Events>(name: K, listener: (...args: Events[K]) => void): this {
    const set = this.listeners[name] ?? new Set();
    this.listeners[name] = set;
    set.add(listener);
    return this;
  }

  off<K extends keyof Events>(name: K, listener: (...args: Events[K]) => void): this {
    this.listeners[name]?.delete(listener);
    return this;
  }

  protected emit<K extends keyof Events>(name: K, ...args: Events[K]): void {
    for (const listener of this.listeners[name] ?? []) listener(...args);
  }
}
