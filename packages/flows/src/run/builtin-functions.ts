/**
 * Functions that flows written for Mercury expect to exist:
 * - `no.op`: answers with its input body and input headers (a placeholder task, or a task that only
 *   moves data through its mappings);
 * - `simple.exception.handler`: answers `{type: 'error', status, message}` from the mapped
 *   `status` and `message` (a ready-made handler task);
 * - `resilience.handler`: the retry / abort / alternative-path / backoff decision of Mercury's
 *   handler, for a `decision` task whose `next` is `[retry, abort, alternative]` (decisions 1, 2, 3).
 * The host registers them next to its own functions.
 */
import { defineFunction, EventEnvelope, type FunctionRegistration } from '@gatehouse/functions';

type Body = Record<string, unknown>;

export function flowBuiltinFunctions(): FunctionRegistration[] {
  return [
    defineFunction({
      route: 'no.op',
      instances: 500,
      handleEvent: (headers, input) => {
        // Without headers of its own the body alone is the same answer (status 200, no headers),
        // and a flow's no.op tasks (a fork, a join) then cost no envelope.
        let reply: EventEnvelope | undefined;
        for (const name in headers) {
          if (name.startsWith('my_')) continue;
          reply ??= new EventEnvelope().setBody(input);
          reply.setHeader(name, headers[name]!);
        }
        return reply ?? input;
      },
    }),
    defineFunction({
      route: 'simple.exception.handler',
      instances: 250,
      handleEvent: (_headers, input) => {
        const body = asBody(input);
        return { type: 'error', status: toInt(body['status'], 500), message: body['message'] ?? null };
      },
    }),
    defineFunction({
      route: 'resilience.handler',
      instances: 500,
      handleEvent: (_h, input) => resilience(asBody(input)),
    }),
  ];
}

/**
 * Input keys (all optional): `status` of the failure (200 = nothing failed: run the task),
 * `max_attempts`, `attempt` (so far), `delay` (ms before a retry), `alternative` (statuses that
 * take path 3: `401, 403-404`), `message`, `cumulative` failures, `backoff_trigger` (failures
 * before a backoff), `backoff_seconds`, `backoff` (end of the current backoff, epoch ms).
 * The flow maps `attempt`, `cumulative` and `backoff` back into its model.
 */
async function resilience(input: Body): Promise<Body> {
  const now = Date.now();
  let cumulative = Math.max(0, toInt(input['cumulative'], 0));
  if (input['backoff'] !== undefined && input['backoff'] !== null) {
    const until = toInt(input['backoff'], 0);
    if (now < until) return unavailable(Math.max(1, Math.trunc((until - now) / 1000)), until);
    cumulative = 0;
  }
  const status = Math.max(200, toInt(input['status'], 200));
  if (status === 200) return { decision: 1, cumulative };
  if (input['backoff_trigger'] !== undefined && input['backoff_seconds'] !== undefined) {
    const trigger = Math.max(1, toInt(input['backoff_trigger'], 1));
    const seconds = Math.max(1, toInt(input['backoff_seconds'], 1));
    cumulative++;
    if (cumulative > trigger) return unavailable(seconds, now + seconds * 1000);
  }
  const maxAttempts = Math.max(1, toInt(input['max_attempts'], 1));
  const attempt = Math.max(0, toInt(input['attempt'], 0)) + 1;
  if (attempt > maxAttempts) {
    const message = input['message'] === undefined ? 'Runtime exception' : String(input['message']);
    return { decision: 2, attempt, cumulative, status, message };
  }
  const reroute = alternativeStatuses(String(input['alternative'] ?? '')).some(
    ([lo, hi]) => status >= lo && status <= hi,
  );
  // The first retry goes at once, later ones after the delay (at least 10 ms).
  if (attempt > 1) await sleep(Math.max(10, toInt(input['delay'], 10)));
  return { decision: reroute ? 3 : 1, attempt, cumulative };
}

function unavailable(seconds: number, until: number): Body {
  const wait = `${seconds} ${seconds === 1 ? 'second' : 'seconds'}`;
  return {
    decision: 2,
    status: 503,
    message: `Service temporarily not available - please try again in ${wait}`,
    backoff: until,
  };
}

/** `401, 403-404` → [[401, 401], [403, 404]]; codes ≤ 200 are ignored. */
function alternativeStatuses(text: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  for (const item of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const dash = item.indexOf('-');
    const a = toInt(dash < 0 ? item : item.slice(0, dash), -1);
    const b = dash < 0 ? a : toInt(item.slice(dash + 1), -1);
    if (a > 200 && b > 200) ranges.push([Math.min(a, b), Math.max(a, b)]);
  }
  return ranges;
}

function asBody(input: unknown): Body {
  return typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as Body) : {};
}

function toInt(value: unknown, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  const n = Number.parseInt(String(value).trim(), 10);
  return Number.isNaN(n) ? -1 : n;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
