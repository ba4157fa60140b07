/** A subscription change the gateway refused: its status and its message. */
export class SubscriptionError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message || `subscription change refused (${status})`);
    this.name = 'SubscriptionError';
    this.status = status;
  }
}
