/**
 * How many reads of the fan-out stream's tail (history pages and rewinds past the event buffer) one
 * replica runs at once (HISTORY_BROKER_READS). Each read is a broker subscription of its own (a
 * Kafka consumer reading up to HISTORY_BROKER_SCAN messages): the per-address budget alone lets
 * many addresses open as many at once as they like. One beyond the bound is refused at once as our
 * outage, never queued: a queue would hold the request for the time of the reads ahead of it.
 */
import { BusUnavailableError } from '@gatehouse/bus';

export class BrokerReadSlots {
  private readonly max: number;
  private running = 0;

  constructor(max: number) {
    this.max = max;
  }

  /** Reads running now. */
  get size(): number {
    return this.running;
  }

  /** A slot for one read, given back by the returned function (once); throws when none is free. */
  take(): () => void {
    if (this.running >= this.max)
      throw new BusUnavailableError('too many reads of the fan-out stream at once on this replica');
    this.running++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.running--;
    };
  }
}
