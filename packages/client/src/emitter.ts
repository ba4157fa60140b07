/**
 * A small typed event emitter (no dependency on node:events, so it runs in browsers). A listener
 * that throws does not stop the others nor the emitter's caller: the error goes to `failed`, as a
 * browser's EventTarget reports a listener's exception and goes on.
 */
export class Emitter<Events extends Record<string, unknown[]>> {
  private readonly listeners: { [K in keyof Events]?: Set<(...args: Events[K]) => void> } = {};

  /** Adds a listener; returns what removes it. */
  on<K extends keyof Events>(name: K, listener: (...args: Events[K]) => void): () => void {
    const set = this.listeners[name] ?? new Set();
    this.listeners[name] = set;
    // A wrapper per call, so the same function added twice is removed once per unsubscribe.
    const entry = (...args: Events[K]) => listener(...args);
    set.add(entry);
    return () => void set.delete(entry);
  }

  /** Adds a listener for the next event only; returns what removes it before that. */
  once<K extends keyof Events>(name: K, listener: (...args: Events[K]) => void): () => void {
    const off = this.on(name, (...args) => {
      off();
      listener(...args);
    });
    return off;
  }

  protected listens(name: keyof Events): boolean {
    return (this.listeners[name]?.size ?? 0) > 0;
  }

  /** Calls the listeners: what they returned (an acknowledging client awaits promises), undefined when one threw. */
  protected emit<K extends keyof Events>(name: K, ...args: Events[K]): unknown[] | undefined {
    const results: unknown[] = [];
    let threw = false;
    for (const listener of [...(this.listeners[name] ?? [])]) {
      try {
        results.push(listener(...args));
      } catch (err) {
        threw = true;
        this.failed(name, err);
      }
    }
    return threw ? undefined : results;
  }

  /** A listener of `name` threw `err`. */
  protected failed(_name: keyof Events, err: unknown): void {
    console.error(err);
  }
}
