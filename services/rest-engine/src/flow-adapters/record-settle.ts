/**
 * A record's whole handling, the same for every transport: its flow run with retries
 * (record-run.ts), then counted done, or written to the binding's dead-letter destination, or
 * dropped with an error when there is none or the write fails (Mercury's rule: blocking the
 * partition would re-run the failing flow forever). The transports give only what differs: the
 * dead-letter write, what runs between retries and what settles the record at its source.
 */
import type { Binding } from './binding.ts';
import { type InboundRecord, type RecordRunContext, runRecord } from './record-run.ts';

export interface RecordSettling {
  /** Runs before a retry (a Kafka heartbeat, a JetStream `working()`). */
  between?: () => Promise<void>;
  /** Writes the record to the binding's dead-letter destination, confirmed; undefined without one. */
  deadLetter: ((record: InboundRecord, error: string) => Promise<void>) | undefined;
  /** Once the record is done or dead-lettered (a JetStream ack); not when its handling failed. */
  settled?: () => void;
  /** The transport's words in the log lines. */
  words: { unit: 'record' | 'message'; dlqOption: string; write: string };
}

/** Never throws: a failure is logged and counted as a dropped record. */
export async function runAndSettle(
  binding: Binding,
  record: InboundRecord,
  ctx: RecordRunContext,
  settling: RecordSettling,
): Promise<void> {
  ctx.metrics.inFlight.inc({ binding: binding.label });
  try {
    const outcome = await runRecord(binding, record, ctx, settling.between);
    if (outcome.kind === 'done') ctx.metrics.records.inc({ binding: binding.label, outcome: 'done' });
    else await deadLetter(binding, record, outcome.error, ctx, settling);
    settling.settled?.();
  } catch (err) {
    ctx.logger.error({ binding: binding.label, err }, `flow adapter: ${settling.words.unit} handling failed`);
    ctx.metrics.records.inc({ binding: binding.label, outcome: 'dropped' });
  } finally {
    ctx.metrics.inFlight.dec({ binding: binding.label });
  }
}

async function deadLetter(
  binding: Binding,
  record: InboundRecord,
  error: string,
  ctx: RecordRunContext,
  { deadLetter: write, words }: RecordSettling,
): Promise<void> {
  const what = { binding: binding.label, ...record.metadata, error };
  if (write === undefined) {
    ctx.logger.error(what, `flow adapter: ${words.unit} dropped after its retries (no ${words.dlqOption})`);
    ctx.metrics.records.inc({ binding: binding.label, outcome: 'dropped' });
    return;
  }
  try {
    await write(record, error);
    ctx.metrics.records.inc({ binding: binding.label, outcome: 'dead_lettered' });
  } catch (err) {
    ctx.logger.error(
      { ...what, err },
      `flow adapter: dead-letter ${words.write} failed; ${words.unit} dropped`,
    );
    ctx.metrics.records.inc({ binding: binding.label, outcome: 'dropped' });
  }
}
