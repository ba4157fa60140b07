/**
 * Liveness and readiness. Liveness (`/health`) answers OK while the process serves HTTP; readiness
 * (`/ready`) runs the registered checks (bus, store …) and turns false as soon as shutdown starts,
 * so a load balancer stops sending new work before connections are drained.
 */
export type Check = () => Promise<void> | void;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, 'ok' | string>;
}

export class Health {
  private readonly checks = new Map<string, Check>();
  private draining = false;

  addCheck(name: string, check: Check): void {
    this.checks.set(name, check);
  }

  startDraining(): void {
    this.draining = true;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  async readiness(timeoutMs = 2000): Promise<ReadinessReport> {
    const checks: Record<string, string> = {};
    if (this.draining) checks['shutdown'] = 'draining';
    await Promise.all(
      [...this.checks].map(async ([name, check]) => {
        try {
          await withTimeout(Promise.resolve(check()), timeoutMs);
          checks[name] = 'ok';
        } catch (err) {
          checks[name] = (err as Error).message || 'failed';
        }
      }),
    );
    return { ready: Object.values(checks).every((v) => v === 'ok'), checks };
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
