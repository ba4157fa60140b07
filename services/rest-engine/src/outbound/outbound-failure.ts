/**
 * A publish that failed, as the flow exception its task throws (AppException: the flow's exception
 * handler gets its status, or the caller does): our own broker or schema registry out of reach, or
 * a bus the engine has no settings for, is 503; what the flow asked for and a broker or the
 * registry refused is 400. The detail of an outage (addresses) goes to the log, not the caller.
 */
import { AvroDataMismatchError, SchemaNotFoundError } from '@gatehouse/avro';
import { BusError } from '@gatehouse/bus';
import { EventRefusedError } from '@gatehouse/event-submission';
import { AppException, isAppException } from '@gatehouse/functions';
import { type Logger, unavailabilityOf } from '@gatehouse/service-kit';
import { BusNotConfiguredError } from './outbound-buses.ts';

/** The schema registry is not configured but a notification names a subject. */
export class AvroNotConfiguredError extends Error {
  override readonly name = 'AvroNotConfiguredError';
}

export function flowExceptionOf(err: unknown, route: string, logger: Logger): AppException {
  if (isAppException(err)) return err;
  if (err instanceof EventRefusedError) return new AppException(err.status, err.message);
  if (err instanceof AvroDataMismatchError || err instanceof SchemaNotFoundError)
    return new AppException(400, err.message);
  if (err instanceof BusNotConfiguredError || err instanceof AvroNotConfiguredError)
    return new AppException(503, err.message);
  const outage = unavailabilityOf(err);
  if (outage) {
    logger.warn({ err, route }, 'flow publish failed: a dependency is unavailable');
    return new AppException(503, `The ${outage.dependency} is unavailable now; retry later.`);
  }
  if (err instanceof BusError) {
    logger.warn({ err, route }, 'flow publish refused by the broker');
    return new AppException(400, `${route}: the broker refused the message`);
  }
  logger.error({ err, route }, 'flow publish failed');
  return new AppException(500, `${route} failed`);
}
