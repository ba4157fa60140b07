/**
 * Turning what a client sends (a JWT and/or a manual subscription list) into the effective
 * subscriptions: JWT-inferred ∪ manual, validated against the extractor configuration, then
 * authorised by SUBSCRIPTION_CHECK (and SUBSCRIPTION_TYPES_CLAIM) when the client named subscriptions (as RIG: a connect without
 * any has nothing to check; its JWT-inferred ones need no more than a valid JWT, and a later PUT is
 * checked). Shared by every transport's connect and by the PUT endpoint, whose 400 texts are RIG's
 * (`cannot accept subscription request: could not parse given subscriptions: …`,
 * `… invalid authorization header: …`), since clients match on them.
 */
import { type AccessCheck, allowAll } from '@gatehouse/auth';
import { unavailabilityOf, unavailableHeaders } from '@gatehouse/service-kit';
import type { ExtractorConfig } from './extractor-config.ts';
import type { HubAuth } from '../auth/index.ts';
import { subscriptionsFromClaims } from './jwt-subscriptions.ts';
import { type SubscriptionBounds, subscriptionBoundProblem } from './subscription-bounds.ts';
import type { SharedSubscriptionLists } from './shared-subscription-lists.ts';
import { hasPattern } from './type-filter.ts';
import { claimAllowsTypes, type TypesClaim } from './types-claim.ts';
import {
  InvalidSubscriptionError,
  parseSubscriptions,
  type Subscription,
  uniqueSubscriptions,
} from './subscription.ts';

export type RejectReason = 'bad_request' | 'denied' | 'rate_limited' | 'at_capacity' | 'gone' | 'unavailable';

export class SubscriptionRequestError extends Error {
  override readonly name = 'SubscriptionRequestError';
  readonly status: number;
  readonly reason: RejectReason;
  private readonly extraHeaders: Record<string, string> | undefined;
  constructor(
    status: number,
    reason: RejectReason,
    message: string,
    options?: ErrorOptions,
    headers?: Record<string, string>,
  ) {
    super(message, options);
    this.status = status;
    this.reason = reason;
    this.extraHeaders = headers;
  }

  /** Headers of the answer: Retry-After for a 503 (a dependency's unless given) or a 429. */
  get headers(): Record<string, string> {
    return this.extraHeaders ?? (this.status === 503 ? unavailableHeaders() : {});
  }
}

export const badRequest = (message: string) => new SubscriptionRequestError(400, 'bad_request', message);

/**
 * How a failed connect or subscription change is answered: its own refusal, or 503 when the store
 * or a bus could not be reached (our outage, never the client's 400). Undefined for anything else.
 */
export function refusalOf(err: unknown): SubscriptionRequestError | undefined {
  if (err instanceof SubscriptionRequestError) return err;
  const outage = unavailabilityOf(err);
  if (!outage) return undefined;
  return new SubscriptionRequestError(
    503,
    'unavailable',
    `The gateway's ${outage.dependency} is unavailable for the moment; retry later.`,
    { cause: err },
  );
}

export interface SubscriptionRequest {
  /** A connect, or a change of an existing connection's subscriptions (PUT): their 400 texts differ. */
  kind: 'connect' | 'change';
  /** At most one: the token the request is judged by (first-token rule, connect-request.ts). */
  jwts: string[];
  /** Those of `jwts` that came in the Authorization header (a bad one is a bad header). */
  headerJwts: string[];
  /** The manual list as JSON text or decoded; undefined when the client sent none. */
  manual: unknown;
  /** Forwarded to an external SUBSCRIPTION_CHECK. */
  authorization: string | undefined;
  /**
   * The body an external SUBSCRIPTION_CHECK receives: the client's own `{"subscriptions": …}` as
   * it gave it (a PUT's body verbatim). Undefined when the client named no subscriptions: then
   * SUBSCRIPTION_CHECK is not consulted. Made only once the list passed its depth bound (a decoded
   * list is written with JSON.stringify, which recurses).
   */
  checkBody: (() => string) | undefined;
  /** The client's address, whose share of the replica's type patterns the request spends. */
  clientAddress?: string | undefined;
}

export interface ResolvedSubscriptions {
  subscriptions: Subscription[];
  /**
   * The JWT-inferred part of `subscriptions`, kept with the connection: an operator's change
   * (`PUT /v3/connections/{id}/subscriptions`) replaces only the rest, the manual part.
   */
  jwtSubscriptions: Subscription[];
  /** Session of the first valid JWT, for blacklist kills. */
  sessionId: string | undefined;
  /** User name of the first valid JWT (JWT_USER_FIELD), for the connections API. */
  user?: string | undefined;
  /** The client's address (as the per-address budget takes it), set by the connection gate. */
  clientAddress?: string | undefined;
  /** When that JWT expires (ms since the Unix epoch); undefined without one or without `exp`. */
  sessionExpiresAt?: number | undefined;
  /** When the first of the JWTs it was resolved with expires; undefined without any `exp`. */
  expiresAt?: number | undefined;
  /** The claims of that JWT, verified: what the connect hook is told (connect-hook.ts). */
  claims?: Record<string, unknown> | undefined;
}

export interface SubscriptionResolverDeps {
  auth: HubAuth;
  /** Why a JWT was refused, for the log: the caller is told only `invalid JWT`. */
  onJwtRefused?: (reason: string) => void;
  extractors: ExtractorConfig;
  validate(subs: Subscription[], clientAddress?: string): void;
  /** SUBSCRIPTION_CHECK (see @gatehouse/auth access-check). */
  check: AccessCheck;
  /** MAX_JSON_DEPTH: a manual list nested deeper is refused. */
  maxJsonDepth: number;
  bounds: SubscriptionBounds;
  /** SUBSCRIPTION_TYPES_CLAIM: with jwt_validation, the types a token lets its holder name. */
  typesClaim?: TypesClaim | undefined;
  /**
   * A check service that was not declared to judge type patterns (SUBSCRIPTION_CHECK_PATTERNS off):
   * one written before them reads `>` as a type name, so a deny-list would let every type through.
   */
  patternsUnchecked?: boolean | undefined;
  /** Manual lists that passed the checks, by their text (SHARED_SUBSCRIPTION_LISTS). */
  shared?: SharedSubscriptionLists | undefined;
}

const UNCHECKED_PATTERNS =
  'type patterns are not accepted here: the subscription check service is not declared to judge them (SUBSCRIPTION_CHECK_PATTERNS)';

/** With a types claim, whether a token's claims allow the subscriptions the client named. */
function typesAllowed(claim: TypesClaim | undefined, named: Subscription[]) {
  return claim && ((claims: Record<string, unknown>) => claimAllowsTypes(claim(claims), named));
}

/**
 * The resolver: at once (no promise) for a request without a JWT whose list needs no external
 * check (SUBSCRIPTION_CHECK no_check, or no list named), the connects of a reconnect storm; a
 * promise otherwise. A refusal is thrown, or the promise rejected with it.
 */
export function createSubscriptionResolver(deps: SubscriptionResolverDeps) {
  return (req: SubscriptionRequest): ResolvedSubscriptions | Promise<ResolvedSubscriptions> =>
    req.jwts.length === 0 ? effective(deps, req, NO_JWT) : fromJwts(deps, req);
}

/** What a request's JWTs gave: their subscriptions, and the session, user and expiry of the first. */
interface JwtPart {
  subscriptions: Subscription[];
  sessionId: string | undefined;
  user: string | undefined;
  sessionExpiresAt: number | undefined;
  expiresAt: number | undefined;
  claims: Record<string, unknown> | undefined;
}

async function fromJwts(
  deps: SubscriptionResolverDeps,
  req: SubscriptionRequest,
): Promise<ResolvedSubscriptions> {
  const part: JwtPart = {
    subscriptions: [],
    sessionId: undefined,
    user: undefined,
    sessionExpiresAt: undefined,
    expiresAt: undefined,
    claims: undefined,
  };
  for (const jwt of req.jwts) {
    let claims: Record<string, unknown>;
    try {
      claims = await deps.auth.verify(jwt);
    } catch (err) {
      // The blacklist could not be read: our outage, not an invalid token.
      if (unavailabilityOf(err)) throw err;
      // One answer whatever the reason: which claim failed (issuer, audience, a blacklisted
      // session) tells a caller how close a forged token came. The reason goes to the log.
      deps.onJwtRefused?.((err as Error).message);
      const problem = 'invalid JWT';
      throw badRequestOf(req, req.headerJwts.includes(jwt) ? authorizationProblem(problem) : problem);
    }
    if (typeof claims['exp'] === 'number')
      part.expiresAt = Math.min(part.expiresAt ?? Number.POSITIVE_INFINITY, claims['exp'] * 1000);
    part.user ??= deps.auth.userOf(claims);
    part.claims ??= claims;
    if (part.sessionId === undefined) {
      part.sessionId = deps.auth.sessionIdOf(claims);
      if (part.sessionId !== undefined && typeof claims['exp'] === 'number')
        part.sessionExpiresAt = claims['exp'] * 1000;
    }
    part.subscriptions.push(...subscriptionsFromClaims(claims, deps.extractors));
  }
  return effective(deps, req, part);
}

/** The effective list (JWT-inferred ∪ manual), checked; SUBSCRIPTION_CHECK asked when it must be. */
function effective(
  deps: SubscriptionResolverDeps,
  req: SubscriptionRequest,
  jwt: JwtPart,
): ResolvedSubscriptions | Promise<ResolvedSubscriptions> {
  const fromJwt = jwt.subscriptions;
  try {
    const { manual, subscriptions } =
      (fromJwt.length === 0 && sharedList(deps.shared, req.manual)) || checkedList(deps, req, fromJwt);
    const resolved: ResolvedSubscriptions = {
      subscriptions,
      jwtSubscriptions: fromJwt.length === 0 ? NO_SUBSCRIPTIONS : uniqueSubscriptions(fromJwt),
      sessionId: jwt.sessionId,
      user: jwt.user,
      sessionExpiresAt: jwt.sessionExpiresAt,
      expiresAt: jwt.expiresAt,
      claims: jwt.claims,
    };
    // Under no_check the body is not made and nothing is awaited: a reconnect storm's connects
    // each made the `{"subscriptions": …}` text and a promise only to be allowed.
    if (req.checkBody === undefined || deps.check === allowAll) return resolved;
    return checked(deps, req, manual, resolved);
  } catch (err) {
    throw asBadRequest(req, err);
  }
}

/** `resolved` once SUBSCRIPTION_CHECK allowed the list the client named; its 403 otherwise. */
async function checked(
  deps: SubscriptionResolverDeps,
  req: SubscriptionRequest,
  manual: Subscription[],
  resolved: ResolvedSubscriptions,
): Promise<ResolvedSubscriptions> {
  let allowed: boolean;
  try {
    allowed = await deps.check({
      jwts: req.jwts,
      authorization: req.authorization,
      body: req.checkBody!(),
      allows: typesAllowed(deps.typesClaim, manual),
    });
  } catch (err) {
    throw asBadRequest(req, err);
  }
  if (!allowed) throw new SubscriptionRequestError(403, 'denied', 'Subscription denied.');
  return resolved;
}

/** A list that did not parse or pass its checks is the client's 400, in the words of its kind of request. */
function asBadRequest(req: SubscriptionRequest, err: unknown): unknown {
  if (!(err instanceof InvalidSubscriptionError)) return err;
  const problem =
    req.kind === 'change'
      ? `could not parse given subscriptions: ${err.message}`
      : `invalid subscriptions: ${err.message}`;
  return badRequestOf(req, problem);
}

/** The JWT-inferred part of a connect without a JWT (shared: no array per connect). */
const NO_SUBSCRIPTIONS: Subscription[] = Object.freeze([]) as unknown as Subscription[];

/** What a request without a JWT has of one: nothing (shared). */
const NO_JWT: JwtPart = Object.freeze({
  subscriptions: NO_SUBSCRIPTIONS,
  sessionId: undefined,
  user: undefined,
  sessionExpiresAt: undefined,
  expiresAt: undefined,
  claims: undefined,
});

interface CheckedList {
  manual: Subscription[];
  subscriptions: Subscription[];
}

/** A manual list alone whose text passed the checks before (shared-subscription-lists.ts). */
function sharedList(shared: SharedSubscriptionLists | undefined, text: unknown): CheckedList | undefined {
  const list = shared?.get(text);
  return list && { manual: list, subscriptions: list };
}

/**
 * The effective list (JWT-inferred ∪ manual) parsed and checked: bounds, patterns, extractor
 * constraints. A manual list alone without patterns is kept for the next connect with its text.
 */
function checkedList(
  deps: SubscriptionResolverDeps,
  req: SubscriptionRequest,
  fromJwt: Subscription[],
): CheckedList {
  const manual = req.manual === undefined ? [] : parseSubscriptions(req.manual, deps.maxJsonDepth);
  const subscriptions = uniqueSubscriptions(fromJwt.length === 0 ? manual : [...fromJwt, ...manual]);
  const overBound = subscriptionBoundProblem(subscriptions, deps.bounds);
  if (overBound) throw badRequestOf(req, overBound);
  const patterns = hasPattern(manual);
  if (deps.patternsUnchecked && req.checkBody !== undefined && patterns)
    throw badRequestOf(req, UNCHECKED_PATTERNS);
  deps.validate(subscriptions, req.clientAddress);
  if (fromJwt.length !== 0 || patterns || !deps.shared) return { manual, subscriptions };
  // Without a JWT's part the effective list is the manual one, duplicates removed.
  const kept = deps.shared.keep(req.manual, subscriptions);
  return { manual: kept, subscriptions: kept };
}

/** A bad Authorization header, in RIG's words (the detail after the colon is ours). */
export const authorizationProblem = (detail: string) => `invalid authorization header: ${detail}`;

/** A 400; a PUT's says it is the subscription request that could not be accepted, as RIG's does. */
export function badRequestOf(
  req: Pick<SubscriptionRequest, 'kind'>,
  problem: string,
): SubscriptionRequestError {
  return badRequest(req.kind === 'change' ? `cannot accept subscription request: ${problem}` : problem);
}
