/** The connect hook's Prometheus metrics (admission/connect-hook.ts): calls by outcome, and their time. */
import { type Counter, counter, type Histogram, histogram, type Registry } from '@gatehouse/service-kit';

/**
 * allowed (2xx, applied), refused (401/403), timeout, unreachable (no connection, reset),
 * bad_status (any other status), bad_answer (not JSON, too large, a field we cannot apply); and,
 * no call made, the connect refused 503 at once: breaker_open (the breaker is open), overloaded
 * (CONNECT_CHECK_MAX_IN_FLIGHT calls under way).
 */
export type ConnectHookOutcome =
  | 'allowed'
  | 'refused'
  | 'timeout'
  | 'unreachable'
  | 'bad_status'
  | 'bad_answer'
  | 'breaker_open'
  | 'overloaded';

const HOOK_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30];

export class ConnectHookMetrics {
  private readonly calls: Counter<'outcome'>;
  private readonly duration: Histogram;

  constructor(registry: Registry) {
    this.calls = counter(registry, {
      name: 'gw_connect_hook_calls_total',
      help: 'Connects the connect hook (CONNECT_CHECK) was asked about, by outcome: allowed, refused (401/403), timeout, unreachable, bad_status, bad_answer; breaker_open and overloaded (CONNECT_CHECK_MAX_IN_FLIGHT reached) count connects refused 503 without a call',
      labelNames: ['outcome'],
    });
    this.duration = histogram(registry, {
      name: 'gw_connect_hook_duration_seconds',
      help: 'Time from calling the connect hook to having its whole answer (or the failure), every call',
      buckets: HOOK_BUCKETS,
    });
  }

  /** One connect's outcome; `seconds` for a call made (none when the breaker was open). */
  called(outcome: ConnectHookOutcome, seconds?: number): void {
    this.calls.inc({ outcome });
    if (seconds !== undefined) this.duration.observe(seconds);
  }
}
