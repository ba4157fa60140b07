/**
 * What a connect hook's 2xx answer gives a connection, `{user?, subscriptions?, data?, expireAt?}`
 * (docs/operations.md "Connect hook"), read and checked, then applied to the connect as resolved
 * from what the client sent. Its subscriptions pass the client's own rules (the same parser,
 * extractor constraints, MAX_SUBSCRIPTIONS_PER_CONNECTION and MAX_SUBSCRIPTIONS_BYTES on the union);
 * `data` is bounded in bytes. An answer that breaks any of them is the hook's fault, not the
 * client's: BadHookAnswer, which the connect gets as our 503.
 */
import { exceedsJsonDepth } from '@gatehouse/service-kit';
import {
  InvalidSubscriptionError,
  parseSubscriptions,
  type ResolvedSubscriptions,
  type Subscription,
  type SubscriptionBounds,
  subscriptionBoundProblem,
  uniqueSubscriptions,
} from '../subscriptions/index.ts';

export class BadHookAnswer extends Error {
  override readonly name = 'BadHookAnswer';
}

export interface ConnectGrant {
  user: string | undefined;
  subscriptions: Subscription[];
  /** The `data` to send in the welcome event; undefined when the hook gave none (or null). */
  data: unknown;
  /** `expireAt` in ms since the epoch; undefined without one. */
  expiresAt: number | undefined;
}

export interface GrantRules {
  /** CONNECT_CHECK_MAX_DATA_BYTES: `data` as JSON. */
  maxDataBytes: number;
  /** MAX_JSON_DEPTH, as for a client's list. */
  maxJsonDepth: number;
  bounds: SubscriptionBounds;
  /** The extractor constraints (SubscriptionIndex.validate): throws for one the hub cannot index. */
  validate(subs: Subscription[]): void;
}

/** A connect as admitted, with what the hook gave it: the welcome event's `data` besides. */
export type GrantedConnect = ResolvedSubscriptions & {
  welcomeData?: unknown;
  /** The hook's `expireAt` (ms): a later subscription change with a fresh JWT does not move the end past it. */
  endsBy?: number | undefined;
  /** The hook's `subscriptions`: a client's own change keeps them (Hub.setSubscriptions). */
  grantedSubscriptions?: Subscription[] | undefined;
};

/** The answer's body read as a grant; an empty body grants nothing more. */
export function readGrant(text: string, rules: GrantRules): ConnectGrant {
  let answer: unknown = {};
  if (text.trim() !== '') {
    try {
      answer = JSON.parse(text);
    } catch {
      throw new BadHookAnswer('the answer is not JSON');
    }
  }
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer))
    throw new BadHookAnswer('the answer is not a JSON object');
  const a = answer as Record<string, unknown>;
  return {
    user: userOf(a['user']),
    subscriptions: subscriptionsOf(a['subscriptions'], rules),
    data: dataOf(a['data'], rules),
    expiresAt: expiryOf(a['expireAt']),
  };
}

/** The connect with the grant applied: the hook's user, its subscriptions added, the earlier end. */
export function applyGrant(
  resolved: ResolvedSubscriptions,
  grant: ConnectGrant,
  rules: GrantRules,
): GrantedConnect {
  const granted: GrantedConnect = { ...resolved };
  if (grant.user !== undefined) granted.user = grant.user;
  if (grant.data !== undefined) granted.welcomeData = grant.data;
  if (grant.subscriptions.length > 0) {
    const subscriptions = uniqueSubscriptions([...resolved.subscriptions, ...grant.subscriptions]);
    const over = subscriptionBoundProblem(subscriptions, rules.bounds);
    if (over) throw new BadHookAnswer(over);
    try {
      rules.validate(subscriptions);
    } catch (err) {
      throw new BadHookAnswer(`subscriptions: ${(err as Error).message}`);
    }
    granted.subscriptions = subscriptions;
    granted.grantedSubscriptions = grant.subscriptions;
    // Server-given, like the JWT's: an operator's change of the manual part keeps them.
    granted.jwtSubscriptions = uniqueSubscriptions([...resolved.jwtSubscriptions, ...grant.subscriptions]);
  }
  if (grant.expiresAt !== undefined) {
    granted.endsBy = grant.expiresAt;
    granted.expiresAt = Math.min(resolved.expiresAt ?? Number.POSITIVE_INFINITY, grant.expiresAt);
    // A long-poll connection's token and record end with this one (longpoll-transport.ts).
    granted.sessionExpiresAt = Math.min(
      resolved.sessionExpiresAt ?? Number.POSITIVE_INFINITY,
      grant.expiresAt,
    );
  }
  return granted;
}

/** A user name goes into the connections API, presence, lifecycle events and logs: short, printable. */
const maxUserLength = 256;

function userOf(user: unknown): string | undefined {
  if (user === undefined || user === null) return undefined;
  if (typeof user !== 'string' || user === '') throw new BadHookAnswer('user must be a non-empty string');
  if (user.length > maxUserLength)
    throw new BadHookAnswer(`user must be at most ${maxUserLength} characters`);
  if (/[\u0000-\u001f\u007f]/.test(user)) throw new BadHookAnswer('user must hold no control characters');
  return user;
}

function subscriptionsOf(list: unknown, rules: GrantRules): Subscription[] {
  if (list === undefined || list === null) return [];
  try {
    return parseSubscriptions(list, rules.maxJsonDepth);
  } catch (err) {
    if (err instanceof InvalidSubscriptionError) throw new BadHookAnswer(`subscriptions: ${err.message}`);
    throw err;
  }
}

function dataOf(data: unknown, rules: GrantRules): unknown {
  if (data === undefined || data === null) return undefined;
  // Written with JSON.stringify, which recurses: as deep as a client's list may be, no deeper.
  if (exceedsJsonDepth(data, rules.maxJsonDepth))
    throw new BadHookAnswer(`data is nested deeper than ${rules.maxJsonDepth} (MAX_JSON_DEPTH)`);
  const maxBytes = rules.maxDataBytes;
  const bytes = Buffer.byteLength(JSON.stringify(data));
  if (bytes > maxBytes)
    throw new BadHookAnswer(
      `data is ${bytes} bytes of JSON, at most ${maxBytes} (CONNECT_CHECK_MAX_DATA_BYTES)`,
    );
  return data;
}

function expiryOf(expireAt: unknown): number | undefined {
  if (expireAt === undefined || expireAt === null) return undefined;
  if (typeof expireAt !== 'number' || !Number.isFinite(expireAt) || expireAt <= 0)
    throw new BadHookAnswer('expireAt must be a time in Unix seconds');
  return expireAt * 1000;
}

/**
 * A client's own subscription change (its list replaced, its JWT read again) with the subscriptions
 * the connect hook gave the connection added back, in the list and in its server-given part.
 */
export function keepGranted(
  change: { subscriptions: Subscription[]; jwtSubscriptions: Subscription[] },
  granted: Subscription[] | undefined,
): { subscriptions: Subscription[]; jwtSubscriptions: Subscription[] } {
  const { subscriptions, jwtSubscriptions } = change;
  if (!granted || granted.length === 0) return { subscriptions, jwtSubscriptions };
  return {
    subscriptions: uniqueSubscriptions([...subscriptions, ...granted]),
    jwtSubscriptions: uniqueSubscriptions([...jwtSubscriptions, ...granted]),
  };
}
