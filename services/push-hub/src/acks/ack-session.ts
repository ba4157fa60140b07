/**
 * An ack session: a durable, named cursor of one authenticated subject (JWT `iss` and `sub`), kept
 * in the store under `gw:ack:<base64url(sha256(iss + "\n" + sub))>:<name>`. The subject is hashed
 * so that no claim text reaches a key (its length, its characters), and two issuers' equal `sub`
 * stay apart.
 */
import { createHash } from 'node:crypto';

export const ACK_KEY_PREFIX = 'gw:ack:';
/**
 * The names of a subject's sessions, space-separated, counted against ACK_MAX_SESSIONS_PER_SUBJECT.
 * (`gw:ack-sessions:` held them as a list, which concurrent first acks could overfill.)
 */
const SUBJECT_INDEX_PREFIX = 'gw:ack-names:';

const namePattern = /^[A-Za-z0-9._~-]{1,64}$/;

export interface AckSession {
  /** The client's name for it (`inbox`). */
  name: string;
  /** The hashed subject. */
  subject: string;
  /** Its store key. */
  key: string;
}

/** What is wrong with a session name, or undefined when it is one. */
export function ackSessionNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return 'expected a string';
  if (!namePattern.test(name)) return 'expected 1 to 64 characters of A-Z a-z 0-9 . _ ~ -';
  return undefined;
}

/** The session `name` of the subject of verified `claims`; undefined when they carry no string `sub`. */
export function ackSessionOf(
  claims: Record<string, unknown> | undefined,
  name: string,
): AckSession | undefined {
  const sub = claims?.['sub'];
  if (typeof sub !== 'string') return undefined;
  const iss = typeof claims?.['iss'] === 'string' ? claims['iss'] : '';
  const subject = createHash('sha256').update(`${iss}\n${sub}`).digest('base64url');
  return { name, subject, key: `${ACK_KEY_PREFIX}${subject}:${name}` };
}

/** The store key of the list of a subject's session names. */
export function subjectIndexKey(session: AckSession): string {
  return SUBJECT_INDEX_PREFIX + session.subject;
}

export const NEEDS_SUB = 'ackSession needs a JWT with a sub claim.';
