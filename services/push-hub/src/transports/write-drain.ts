/**
 * Waiting for a connection's output to drain where the library has no drain event of its own but
 * calls back once a given write has gone out (`ws`, engine.io): the write that made the connection
 * full is sent with `written()` as its callback, and `whenDrained` waits for that, since every write
 * before it has gone out by then. Made for a connection the first time it is full (most never are).
 */
export class WriteDrain {
  private awaiting = false;
  private ready: (() => void) | undefined;

  /** The callback of the write that made the output full. */
  written(): () => void {
    this.awaiting = true;
    return () => {
      this.awaiting = false;
      const ready = this.ready;
      this.ready = undefined;
      ready?.();
    };
  }

  /**
   * Calls `ready` once that write has gone out. Without one to wait for (or with nothing unsent)
   * it calls back on the next turn: the caller tries again and gets false, with a new one, if the
   * output is still full.
   */
  whenDrained(ready: () => void, unsent: number): void {
    if (this.awaiting && unsent > 0) this.ready = ready;
    else setImmediate(ready);
  }
}
