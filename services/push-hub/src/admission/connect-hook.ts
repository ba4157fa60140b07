/**
 * CONNECT_CHECK, the connect hook (as Centrifugo's connect proxy): at every connect, on every
 * transport and reconnects too, once the connect has passed the gate's other steps, the hub POSTs
 * what it knows of it to the hook, which refuses it (401/403: the client gets 403 and one fixed
 * text; the hook's status and body go to the log only) or answers 2xx with what the connection
 * gets (connect-grant.ts).
 *
 * The hook is our dependency, so its failures are our outage, never the client's fault: a time-out
 * (CONNECT_CHECK_TIMEOUT, the body included), no connection, any other status, an answer that is
 * not JSON, larger than CONNECT_CHECK_MAX_RESPONSE_BYTES (not read further) or that cannot be
 * applied: 503 with Retry-After, logged. After CONNECT_CHECK_BREAKER_FAILURES of those in a row the
 * breaker opens (circuit-breaker.ts): connects are refused 503 at once, Retry-After the cool-down
 * left, without a call. At most CONNECT_CHECK_MAX_IN_FLIGHT calls are under way at once: a connect
 * beyond is refused 503 at once too, so a reconnect storm does not open a socket to the hook for
 * every client (each connect holds a connection place meanwhile, so MAX_CONNECTIONS bounds them
 * anyway, but 20,000 sockets to one hook is an attack on it).
 *
 * The request holds the client's verified JWT claims, never the token itself, and of its headers
 * only those CONNECT_CHECK_HEADERS names: a token passed on is a token the hook's logs keep.
 *
 * Answers are not cached: what the hook decides depends on more than the JWT (the address, the
 * headers, the subscriptions asked for, the state it keeps: a user banned a second ago), so an
 * answer kept for one connect would be wrong for another with the same JWT.
 */
import type { IncomingMessage } from 'node:http';
import type { Logger } from '@gatehouse/service-kit';
import type { TransportKind } from '../connections/index.ts';
import type { ConnectHookMetrics, ConnectHookOutcome } from '../metrics/index.ts';
import { type ResolvedSubscriptions, SubscriptionRequestError } from '../subscriptions/index.ts';
import type { CircuitBreaker } from './circuit-breaker.ts';
import {
  applyGrant,
  BadHookAnswer,
  type GrantedConnect,
  type GrantRules,
  readGrant,
} from './connect-grant.ts';

export interface ConnectHookOptions {
  url: URL;
  /** CONNECT_CHECK_TIMEOUT: the call and its whole answer. */
  timeoutMs: number;
  /** CONNECT_CHECK_HEADERS: the request headers passed on, by name. */
  headers: string[];
  /** CONNECT_CHECK_MAX_RESPONSE_BYTES. */
  maxResponseBytes: number;
  /** CONNECT_CHECK_MAX_IN_FLIGHT: calls under way at once; beyond, 503 without a call. */
  maxInFlight: number;
  breaker: CircuitBreaker;
  rules: GrantRules;
  metrics: ConnectHookMetrics;
  logger: Logger;
}

/** What the gate knows of a connect it has admitted so far. */
export interface ConnectFacts {
  transport: TransportKind;
  resolved: ResolvedSubscriptions;
  /** As the per-address budget took it (TRUSTED_PROXIES applied). */
  clientAddress: string;
  /** It came back with a connection token or a resume position (reconnect-evidence.ts). */
  reconnect: boolean;
  /** The HTTP request the connect came with: its headers. */
  from: IncomingMessage;
}

export type ConnectHook = (facts: ConnectFacts) => Promise<GrantedConnect>;

/** What one call came to: the connect granted, or why not. */
type Outcome =
  | { outcome: 'allowed'; granted: GrantedConnect }
  | {
      outcome: Exclude<ConnectHookOutcome, 'allowed' | 'breaker_open' | 'overloaded'>;
      status?: number;
      detail: string;
    };

const denied = () => new SubscriptionRequestError(403, 'denied', 'Connection denied.');

const unavailable = (retryAfterSeconds: number) =>
  new SubscriptionRequestError(
    503,
    'unavailable',
    'The connect check is unavailable for the moment; retry later.',
    undefined,
    { 'retry-after': String(retryAfterSeconds) },
  );

/** Bytes of a refusal's or a failure's body kept for the log. */
const LOGGED_BODY_CHARS = 200;

export function createConnectHook(o: ConnectHookOptions): ConnectHook {
  // Without the query string and any credentials in the URL: what the log may name.
  const where = `${o.url.origin}${o.url.pathname}`;
  const allowed = o.headers.map((h) => h.toLowerCase());
  let inFlight = 0;
  return async (facts) => {
    if (inFlight >= o.maxInFlight) {
      o.metrics.called('overloaded');
      throw unavailable(1);
    }
    const wait = o.breaker.admit();
    if (wait > 0) {
      o.metrics.called('breaker_open');
      throw unavailable(Math.ceil(wait / 1000));
    }
    const started = performance.now();
    inFlight++;
    let result: Outcome;
    try {
      result = await call(o, requestBody(facts, allowed), facts.resolved);
    } catch (err) {
      // Not expected (call() answers every failure it knows); still a failure, so a half-open
      // breaker's trial is never left taken.
      result = { outcome: 'bad_answer', detail: messageOf(err) };
    } finally {
      inFlight--;
    }
    o.metrics.called(result.outcome, (performance.now() - started) / 1000);
    if (result.outcome === 'allowed' || result.outcome === 'refused') o.breaker.succeeded();
    else o.breaker.failed();
    if (result.outcome === 'allowed') return result.granted;
    throw clientAnswerOf(result, o.logger, where);
  };
}

/** The client's answer to a call that did not admit it; the hook's side of it goes to the log only. */
function clientAnswerOf(result: Exclude<Outcome, { outcome: 'allowed' }>, logger: Logger, where: string) {
  const { outcome, status, detail } = result;
  if (outcome === 'refused') {
    logger.info({ hook: where, status, body: detail }, 'connect hook refused a connect');
    return denied();
  }
  logger.warn({ hook: where, outcome, status, detail }, 'connect hook failed; the connect gets 503');
  return unavailable(1);
}

/** The JSON the hook gets (docs/operations.md "Connect hook"). */
function requestBody(facts: ConnectFacts, allowed: string[]): string {
  const { resolved } = facts;
  const headers: Record<string, string> = {};
  for (const name of allowed) {
    const value = facts.from.headers[name];
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return JSON.stringify({
    transport: facts.transport,
    reconnect: facts.reconnect,
    clientAddress: facts.clientAddress,
    subscriptions: resolved.subscriptions,
    ...(resolved.claims !== undefined && { claims: resolved.claims }),
    ...(resolved.user !== undefined && { user: resolved.user }),
    ...(resolved.sessionId !== undefined && { sessionId: resolved.sessionId }),
    headers,
  });
}

async function call(o: ConnectHookOptions, body: string, resolved: ResolvedSubscriptions): Promise<Outcome> {
  let res: Response;
  try {
    res = await fetch(o.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(o.timeoutMs),
    });
  } catch (err) {
    return { outcome: timedOut(err) ? 'timeout' : 'unreachable', detail: messageOf(err) };
  }
  let text: string;
  try {
    text = await readBounded(res, o.maxResponseBytes);
  } catch (err) {
    if (err instanceof BadHookAnswer)
      return { outcome: 'bad_answer', status: res.status, detail: err.message };
    return { outcome: timedOut(err) ? 'timeout' : 'unreachable', status: res.status, detail: messageOf(err) };
  }
  const excerpt = text.slice(0, LOGGED_BODY_CHARS);
  if (res.status === 401 || res.status === 403)
    return { outcome: 'refused', status: res.status, detail: excerpt };
  if (res.status < 200 || res.status > 299)
    return { outcome: 'bad_status', status: res.status, detail: excerpt };
  try {
    const grant = readGrant(text, o.rules);
    // An expiry already past: the hook says this connect's time is over.
    if (grant.expiresAt !== undefined && grant.expiresAt <= Date.now())
      return { outcome: 'refused', status: res.status, detail: 'expireAt is in the past' };
    return { outcome: 'allowed', granted: applyGrant(resolved, grant, o.rules) };
  } catch (err) {
    // A BadHookAnswer, or a RangeError from an answer the parser could not take.
    return { outcome: 'bad_answer', status: res.status, detail: messageOf(err) };
  }
}

/** The body as text, at most `max` bytes: beyond, the rest is not read (BadHookAnswer). */
async function readBounded(res: Response, max: number): Promise<string> {
  const tooLarge = () =>
    new BadHookAnswer(`the answer is larger than ${max} bytes (CONNECT_CHECK_MAX_RESPONSE_BYTES)`);
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (declared > max) {
    await res.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > max) {
      // Leaving the loop early cancels the stream (and its connection).
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function timedOut(err: unknown): boolean {
  const e = err as { name?: string; cause?: { name?: string } } | undefined;
  return e?.name === 'TimeoutError' || e?.cause?.name === 'TimeoutError';
}

function messageOf(err: unknown): string {
  const e = err as { message?: string; cause?: { message?: string; code?: string } } | undefined;
  return [e?.message, e?.cause?.code ?? e?.cause?.message].filter(Boolean).join(': ');
}
