/**
 * Where a connection opened with `ackSession=<name>` starts: after the session's acknowledged
 * position when the store holds one (a resume from it, on any replica), else as it would without
 * the session. Read at connect, after the JWT is verified; the store down refuses the connect as
 * our outage (503), since starting elsewhere would skip or repeat what the session expects.
 */
import { badRequest } from '../subscriptions/index.ts';
import type { AckPositions } from './ack-positions.ts';
import { type AckSession, ackSessionOf, NEEDS_SUB } from './ack-session.ts';

export interface AckStart {
  session: AckSession;
  /** The acknowledged position; undefined when the store holds none. */
  position: string | undefined;
  /** ACK_TIMEOUT in ms, told to the client in its welcome. */
  timeoutMs: number;
}

/** What `gw.connection.create` carries of it: `"ack":{"session","position","timeoutMs"}`. */
export interface AckWelcome {
  session: string;
  position: string | null;
  timeoutMs: number;
}

export type ReadAckStart = (name: string, claims: Record<string, unknown> | undefined) => Promise<AckStart>;

export function createAckStart(positions: AckPositions, timeoutMs: number): ReadAckStart {
  return async (name, claims) => {
    const session = ackSessionOf(claims, name);
    if (!session) throw badRequest(NEEDS_SUB);
    return { session, position: await positions.read(session), timeoutMs };
  };
}

export function welcomeOf(start: AckStart): AckWelcome {
  return { session: start.session.name, position: start.position ?? null, timeoutMs: start.timeoutMs };
}
