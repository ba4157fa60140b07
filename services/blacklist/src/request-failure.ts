/**
 * How a blacklist request that did not succeed is answered: the client's mistakes with their status
 * and a text that names the field (400, 413); an unreachable store or a session busy on another
 * replica with 503 and Retry-After, since retrying is what fixes those. Anything else (a command the
 * store refused included) is a bug and goes on to the host (500, logged there).
 */
import type { ServerResponse } from 'node:http';
import {
  HttpError,
  type Logger,
  sendText,
  sendUnavailable,
  unavailabilityOf,
  unavailableHeaders,
} from '@gatehouse/service-kit';
import { InvalidBlacklistRequest } from './blacklist-request.ts';
import { LockTimeoutError } from './store-lock.ts';

export function sendFailure(
  res: ServerResponse,
  err: unknown,
  logger: Logger,
  headers: Record<string, string> = {},
): void {
  if (err instanceof InvalidBlacklistRequest) sendText(res, 400, err.message, headers);
  else if (err instanceof HttpError) sendText(res, err.status, err.message, headers);
  else if (unavailabilityOf(err)) {
    logger.warn({ err }, 'blacklist store unavailable');
    sendUnavailable(res, unavailabilityOf(err)!.dependency, headers);
  } else if (err instanceof LockTimeoutError) {
    sendText(res, 503, 'The session is being changed by another request; retry later.', {
      ...headers,
      ...unavailableHeaders(),
    });
  } else throw err;
}
