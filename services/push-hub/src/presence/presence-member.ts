/**
 * Who is present: a session when the connection has one (its JWT's), else its user, else the
 * connection alone. A client that reconnects with the same JWT is the same member, so its new
 * connection (on any replica) continues its presence instead of leaving and joining again.
 *
 * What other clients see of a member is an opaque id (a hash: session ids and connection ids are
 * never shown to other clients) and its user name, when it has one.
 */
import { createHash } from 'node:crypto';

export interface MemberSource {
  connectionId: string;
  sessionId?: string | undefined;
  user?: string | undefined;
}

export function memberOf(c: MemberSource): string {
  if (c.sessionId !== undefined) return `s:${c.sessionId}`;
  if (c.user !== undefined) return `u:${c.user}`;
  return `c:${c.connectionId}`;
}

/** The session a member is, when it is one (for the operator's lifecycle events, never for clients). */
export function sessionOfMember(member: string): string | undefined {
  return member.startsWith('s:') ? member.slice(2) : undefined;
}

/** The id other clients see for a member: stable, and telling nothing of its session or connection. */
export function publicMemberId(member: string, salt: string): string {
  return createHash('sha256').update(salt).update('\u0000').update(member).digest('base64url').slice(0, 22);
}
