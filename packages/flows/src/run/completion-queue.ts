/**
 * The completions of tasks whose function answered synchronously, run one after another once the
 * engine step that called the function is over — the order the promise hops of an asynchronous
 * answer would give them, without the promises. A step that calls several functions (a fork, a
 * parallel task, a sub-flow or `ext:` flow started inside a mapping) calls them all before any of
 * their completions runs, so no completion lands inside a mapping or between a fork's branches.
 * Running them in a loop instead of from the call that queued them keeps the stack flat however
 * many tasks a flow chains (a pipeline loop of thousands of rounds).
 */
export class CompletionQueue {
  private readonly pending: Array<() => void> = [];
  private head = 0;
  private draining = false;
  private readonly onError: (err: unknown) => void;

  /** `onError` gets what a completion threw (completions catch their own: a bug if it comes). */
  constructor(onError: (err: unknown) => void) {
    this.onError = onError;
  }

  /** Runs an engine step now, then every completion it (or those after it) queued. */
  step(work: () => void): void {
    if (this.draining) {
      work();
      return;
    }
    this.draining = true;
    try {
      this.attempt(work);
      while (this.head < this.pending.length) {
        const next = this.pending[this.head]!;
        this.pending[this.head++] = noop;
        this.attempt(next);
      }
    } finally {
      this.pending.length = 0;
      this.head = 0;
      this.draining = false;
    }
  }

  /** Queues a completion; it runs when the current step is over (at once when none runs). */
  defer(completion: () => void): void {
    if (this.draining) this.pending.push(completion);
    else this.step(completion);
  }

  private attempt(work: () => void): void {
    try {
      work();
    } catch (err) {
      this.onError(err);
    }
  }
}

function noop(): void {}
