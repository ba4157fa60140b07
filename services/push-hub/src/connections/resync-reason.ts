/**
 * Why a client's position cannot be resumed from, as `gw.resync_required` tells it (`reason`), so a
 * client can tell a stream that started over from one it merely fell too far behind:
 * - `epoch-changed`: the position belongs to another incarnation of the stream (its topic was
 *   deleted and created anew, its store lost): its events and the stream's now share no history.
 * - `retention-gap`: the events after it are no longer held (the ring has dropped them and the
 *   broker's retention too, or the bus cannot replay).
 * - `unknown-position`: the stream never had it (malformed, beyond its end, another partition).
 */
import type { PositionUnavailableError } from '@gatehouse/bus';

export type ResyncReason = 'epoch-changed' | 'retention-gap' | 'unknown-position';

/** The reason a broker's refusal to replay from a position gives a client. */
export function resyncReasonOf(err: PositionUnavailableError): ResyncReason {
  if (err.reason === 'epoch') return 'epoch-changed';
  return err.reason === 'expired' ? 'retention-gap' : 'unknown-position';
}

/** What a client should do, in words, per reason. */
export const resyncAdvice: Record<ResyncReason, string> = {
  'epoch-changed':
    'the event stream was created anew since this id (its history differs); reload the state you derive from events',
  'retention-gap': 'events after this id are no longer available; reload the state you derive from events',
  'unknown-position': 'this id names no place in the event stream; reload the state you derive from events',
};
