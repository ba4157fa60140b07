/**
 * The authentication step. An endpoint names one authentication route, or rules that pick the
 * route by a request header (`header: route`, `header: value: route`, `default: route`). The route's
 * function gets the AsyncHttpRequest and answers:
 * - `true` → the request goes on; `false` (or anything else) → 401 Unauthorized;
 * - an EventEnvelope → accepted when its body is `true`, or when it has no body and no error status;
 *   its headers become the session information the target sees with `getSessionInfo()`;
 * - a thrown AppException → that status and message (a function can say 403); other errors → 401.
 */
import { isEventEnvelope } from '@gatehouse/functions';

export type AuthSelector =
  | { kind: 'route'; route: string }
  | {
      kind: 'rules';
      rules: Array<{ header: string; value: string | undefined; route: string }>;
      fallback: string;
    };

export function selectAuthRoute(selector: AuthSelector, headers: Record<string, string | undefined>): string {
  if (selector.kind === 'route') return selector.route;
  for (const rule of selector.rules) {
    const actual = headers[rule.header];
    if (actual === undefined) continue;
    if (rule.value === undefined || rule.value === actual.toLowerCase()) return rule.route;
  }
  return selector.fallback;
}

/** Every route the selector may pick, for the load-time existence check. */
export function authRoutes(selector: AuthSelector): string[] {
  return selector.kind === 'route'
    ? [selector.route]
    : [...selector.rules.map((r) => r.route), selector.fallback];
}

/** Reads the `authentication` field: a route name, or a list of rules with a `default`. */
export function parseAuthSelector(value: unknown): AuthSelector | string {
  if (typeof value === 'string') return { kind: 'route', route: value.trim().toLowerCase() };
  if (!Array.isArray(value)) return 'authentication must be a route name or a list of rules';
  const rules: Array<{ header: string; value: string | undefined; route: string }> = [];
  let fallback: string | undefined;
  for (const item of value) {
    const parts = String(item)
      .split(':')
      .map((p) => p.trim());
    if (parts.some((p) => p === '') || parts.length < 2 || parts.length > 3) {
      return `invalid authentication rule '${String(item)}': use 'header: route' or 'header: value: route'`;
    }
    const header = parts[0]!.toLowerCase();
    const route = parts.at(-1)!.toLowerCase();
    if (header === 'default' && parts.length === 2) fallback = route;
    else rules.push({ header, value: parts.length === 3 ? parts[1]!.toLowerCase() : undefined, route });
  }
  if (fallback === undefined) return `missing 'default: route' in authentication rules`;
  // A header-only rule wins over value rules of the same header, whatever their order.
  rules.sort((a, b) =>
    a.header === b.header ? Number(a.value !== undefined) - Number(b.value !== undefined) : 0,
  );
  return { kind: 'rules', rules, fallback };
}

export type AuthVerdict =
  | { accepted: true; session: Record<string, string> | undefined }
  | { accepted: false };

export function judgeAuthResult(result: unknown): AuthVerdict {
  if (result === true) return { accepted: true, session: undefined };
  if (!isEventEnvelope(result)) return { accepted: false };
  const body = result.getBody();
  const status = result.getStatus();
  const accepted = body === true || (body === undefined && (status === undefined || status < 400));
  if (!accepted) return { accepted: false };
  const session: Record<string, string> = {};
  for (const [k, v] of Object.entries(result.getHeaders())) session[k] = Array.isArray(v) ? v.join(', ') : v;
  return { accepted: true, session };
}
