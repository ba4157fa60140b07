/**
 * Tells a Redis outage from a refused command. Whatever is not a server reply (connection refused or
 * closed, not writeable while reconnecting, a command time-out) is an outage; of the server's error
 * replies, only those that mean "not serving now" are (LOADING after a restart, BUSY with a long
 * script, a replica or cluster that is failing over). WRONGTYPE, NOSCRIPT … are bugs, not outages.
 */
import { ReplyError } from 'ioredis';

const notServingReplies = /^(LOADING|BUSY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|READONLY|NOREPLICAS)\b/;

export function isRedisOutage(err: unknown): boolean {
  if (err instanceof ReplyError) return notServingReplies.test((err as Error).message);
  return err instanceof Error;
}
