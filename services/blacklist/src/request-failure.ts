/**
 * How a blacklist request that did not succeed is answered: the client's mistakes with their status
 * and a text that names the field (400, 413); an unreachable store or a session busy on another
 * replica with 503 and Retry-After, since retrying is what fixes those. Anything else is a bug and
 * goes on to the host (500, logged there).
 */
import type { ServerResponse } from 'node:http';
import { HttpError, type Logger, sendText } from '@gatehouse/service-kit';
import { StoreError } from '@gatehouse/store';
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
  else if (err instanceof StoreError || err instanceof LockTimeoutError) {
    logger.warn({ err }, 'blacklist store unavailable');
    sendText(res, 503, 'The blacklist store is unavailable; retry later.', {
      ...headers,
      'retry-after': '1',
    });
  } else throw err;
}
