/** A counting semaphore: at most `size` holders; the others wait in arrival order. */
export class Slots {
  private used = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly idleWaiters: Array<() => void> = [];
  private readonly size: number;

  constructor(size: number) {
    this.size = size;
  }

  get inUse(): number {
    return this.used;
  }

  /** Takes a slot now when one is free; false when all are held. */
  tryTake(): boolean {
    if (this.used >= this.size) return false;
    this.used++;
    return true;
  }

  async take(): Promise<void> {
    if (this.tryTake()) return;
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  give(): void {
    const next = this.waiting.shift();
    if (next) {
      next(); // the slot passes to the next holder as it is
      return;
    }
    this.used--;
    if (this.used === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Resolves once no slot is held, or after `ms`; true when none is. */
  async idle(ms: number): Promise<boolean> {
    if (this.used === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.idleWaiters.push(resolve);
      timer = setTimeout(resolve, ms);
    });
    clearTimeout(timer);
    return this.used === 0;
  }
}
