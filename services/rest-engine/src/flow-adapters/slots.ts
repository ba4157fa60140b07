/** A counting semaphore: at most `size` holders; the others wait in arrival order. */
export class Slots {
  private used = 0;
  private readonly waiting: Array<() => void> = [];
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
    if (next)
      next(); // the slot passes to the next holder
    else this.used--;
  }

  /** Resolves once no slot is held, or after `ms`; true when none is. */
  async idle(ms: number): Promise<boolean> {
    const until = Date.now() + ms;
    while (this.used > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    return this.used === 0;
  }
}
