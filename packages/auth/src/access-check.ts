/**
 * SUBSCRIPTION_CHECK and SUBMISSION_CHECK: who may subscribe to or submit events. `no_check` allows
 * everything; `jwt_validation` requires at least one valid, non-blacklisted JWT whose claims allow
 * the request (`allows`, when the caller gives one: e.g. the event's source), and rejects with the
 * store's error when none is valid and the blacklist could not be read; a URL delegates to
 * an external service that receives `POST <url>` with the request's JSON body and Authorization
 * header and allows on 2xx. Any other answer, a time-out or a transport error denies (and is
 * reported through `onProblem`, since it usually means the check service is broken).
 */
import { type Field, unavailabilityOf } from '@gatehouse/service-kit';
import type { JwtClaims } from './jwt-verifier.ts';

export type AccessCheckMode = 'no_check' | 'jwt_validation' | URL;

export interface AccessRequest {
  /** Bearer tokens the caller presented. */
  jwts: string[];
  /** Authorization header value(s) passed on to an external check. */
  authorization: string | undefined;
  /** The JSON body sent to an external check. */
  body: string;
  /** With jwt_validation: whether a valid token's claims allow this request too; absent: any valid token does. */
  allows?: ((claims: JwtClaims) => boolean) | undefined;
}

export type AccessCheck = (req: AccessRequest) => Promise<boolean>;

/** Case-insensitive `no_check` / `jwt_validation`, or an http(s) URL; throws otherwise. */
export function parseAccessCheckMode(setting: string): AccessCheckMode {
  const lower = setting.trim().toLowerCase();
  if (lower === 'no_check' || lower === '') return 'no_check';
  if (lower === 'jwt_validation') return 'jwt_validation';
  try {
    const url = new URL(setting.trim());
    if (url.protocol === 'http:' || url.protocol === 'https:') return url;
  } catch {}
  throw new Error(`"${setting}" is not no_check, jwt_validation or an http(s) URL`);
}

export interface AccessCheckOptions {
  /** Resolves with the claims of a valid, non-blacklisted token (e.g. Auth.verifyAndCheck). */
  verify(jwt: string): Promise<{ claims: JwtClaims }>;
  timeoutMs?: number;
  onProblem?: (problem: { url: string; status?: number; err?: Error }) => void;
}

/**
 * The check of `no_check`: allows everything. A caller that builds the request only to ask may
 * compare with it and skip both (a connect's `{"subscriptions": …}` body, the push hub).
 */
export const allowAll: AccessCheck = async () => true;

export function createAccessCheck(mode: AccessCheckMode, options: AccessCheckOptions): AccessCheck {
  if (mode === 'no_check') return allowAll;
  if (mode === 'jwt_validation') return (req) => anyValid(req, options.verify);
  return async (req) => {
    try {
      const res = await fetch(mode, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(req.authorization ? { authorization: req.authorization } : {}),
        },
        body: req.body,
        signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
      });
      await res.arrayBuffer();
      if (res.status >= 200 && res.status < 300) return true;
      if (res.status !== 401 && res.status !== 403)
        options.onProblem?.({ url: mode.href, status: res.status });
      return false;
    } catch (err) {
      options.onProblem?.({ url: mode.href, err: err as Error });
      return false;
    }
  };
}

/**
 * Whether one of the tokens is valid and allows the request. When none does and one could not be
 * checked because the store was unreachable (the blacklist), that failure is thrown: the caller
 * answers 503, not 403.
 */
async function anyValid(
  req: AccessRequest,
  verify: (jwt: string) => Promise<{ claims: JwtClaims }>,
): Promise<boolean> {
  let outage: unknown;
  for (const jwt of req.jwts) {
    try {
      const { claims } = await verify(jwt);
      if (req.allows === undefined || req.allows(claims)) return true;
    } catch (err) {
      if (unavailabilityOf(err)) outage ??= err;
    }
  }
  if (outage !== undefined) throw outage;
  return false;
}

/** The env field for SUBSCRIPTION_CHECK / SUBMISSION_CHECK, so a bad value stops start-up naming it. */
export function accessCheckField(description: string): Field<AccessCheckMode> {
  return {
    description,
    defaultText: '`no_check`',
    parse: (raw) => parseAccessCheckMode(raw ?? 'no_check'),
  };
}
