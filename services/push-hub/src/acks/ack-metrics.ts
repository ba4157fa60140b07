/** The metrics of acknowledged delivery: acknowledgements by outcome, redeliveries, sessions held. */
import { counter, gauge, type Registry } from '@gatehouse/service-kit';

export type AckResult =
  | 'advanced'
  | 'unchanged'
  | 'bad_request'
  | 'unauthorized'
  | 'conflict'
  | 'rate_limited'
  | 'unavailable';

export class AckMetrics {
  private readonly requests;
  private readonly redeliveries;
  private readonly connected;

  constructor(registry: Registry) {
    this.requests = counter(registry, {
      name: 'gw_ack_requests_total',
      help: 'Acknowledgements (POST /_gw/v1/ack) by result: advanced, unchanged (not ahead of the stored one), or why refused',
      labelNames: ['result'] as const,
    });
    this.redeliveries = counter(registry, {
      name: 'gw_ack_redeliveries_total',
      help: 'Ack-session connections ended (ack_timeout) so that what they were sent and did not acknowledge within ACK_TIMEOUT comes again',
    });
    this.connected = gauge(registry, {
      name: 'gw_ack_sessions_connected',
      help: 'Connections with an ack session this replica holds',
    });
  }

  acknowledged(result: AckResult): void {
    this.requests.inc({ result });
  }

  redelivered(): void {
    this.redeliveries.inc();
  }

  sessionsConnected(n: number): void {
    this.connected.set(n);
  }
}

/** The result an ack answered with `status` counts as. */
export function resultOf(status: number): AckResult {
  if (status === 401) return 'unauthorized';
  if (status === 409) return 'conflict';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'unavailable';
  return 'bad_request';
}
