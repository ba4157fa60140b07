/**
 * Where configuration problems go: the logger at start-up, a list in tests. Errors skip what they
 * name; warnings change nothing but deserve a look.
 */
import type { Logger } from '@gatehouse/service-kit';

export interface ProblemReport {
  error(message: string): void;
  warn(message: string): void;
}

export function loggingReport(logger: Logger): ProblemReport {
  return {
    error: (message) => logger.error(message),
    warn: (message) => logger.warn(message),
  };
}

export class CollectingReport implements ProblemReport {
  readonly errors: string[] = [];
  readonly warnings: string[] = [];
  error(message: string): void {
    this.errors.push(message);
  }
  warn(message: string): void {
    this.warnings.push(message);
  }
}
