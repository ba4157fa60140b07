/**
 * The HTTP ways in: `POST /_gw/v1/events` on the public edge (SUBMISSION_CHECK applies, CORS) and
 * `POST /v2/messages`, `/v3/messages`, `/messages` on the internal API (no check; works without any
 * broker, on the memory bus). CloudEvents 0.2 and 1.0, structured or binary mode. 202 with the event
 * as accepted, and an event whose source and id were accepted within EVENT_DEDUPE_WINDOW_SECONDS
 * answered 202 with `Gatehouse-Duplicate: true` and not published again (duplicate-window.ts); 400 with usage text for a body that is not a valid CloudEvent or nests deeper than
 * MAX_JSON_DEPTH, and 400 for a type or source of the gateway's own events (`gw.…`, `gatehouse`:
 * gateway-namespace.ts in @gatehouse/cloudevents) or a source in the namespace of the events wrapped
 * from source topics (wrapped-source.ts); 403 when the check
 * denies; 413 beyond MAX_EVENT_BYTES or MAX_EVENT_KEYS; 415 for batch mode or another event format; 503 when the
 * fan-out stream cannot take the event. While tracing, each submission is a SERVER span
 * (event-request-span.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type CloudEvent,
  gatewayNamespaceProblems,
  wildcardTypeProblems,
  InvalidCloudEventError,
  parseHttpEvent,
  serializeJsonEvent,
  UnsupportedCloudEventError,
} from '@gatehouse/cloudevents';
import {
  assertJsonDepth,
  exceedsJsonMembers,
  JsonTooManyMembersError,
  type CorsPolicy,
  HttpError,
  JsonTooDeepError,
  type Logger,
  type PreflightRules,
  readBody,
  requestPath,
  sendText,
  sendUnavailable,
  unavailabilityOf,
} from '@gatehouse/service-kit';
import { isTracingActive } from '@gatehouse/tracing';
import { EventRequestSpan } from './event-request-span.ts';
import type { DuplicateWindow } from './duplicate-window.ts';
import type { FanoutProducer } from './fanout-producer.ts';
import type { PublisherMetrics } from './publisher-metrics.ts';
import { reservedSourceProblem } from './wrapped-source.ts';

/**
 * Why no producer may publish the event: the gateway's own namespace, a wrapped source's, or a type
 * that reads as a subscription pattern.
 */
function reservedProblem(event: CloudEvent): string | undefined {
  const problems = [...gatewayNamespaceProblems(event), ...wildcardTypeProblems(event)].map((p) => p.message);
  const wrapped = reservedSourceProblem(event.source);
  if (wrapped) problems.push(wrapped);
  return problems.length > 0 ? problems.join('; ') : undefined;
}

export const EVENTS_PATH = '/_gw/v1/events';
export const MESSAGE_PATHS = ['/v2/messages', '/v3/messages', '/messages'];

/** The public endpoint's preflight: tokens, JSON bodies and binary-mode CloudEvent headers. */
const eventsPreflight: PreflightRules = {
  methods: 'POST',
  headers:
    'content-type, authorization, ce-specversion, ce-id, ce-type, ce-source, ce-time, ce-subject, traceparent',
};

export const usage = `Usage: POST a CloudEvent (specversion 0.2 or 1.0).
Structured mode: content-type application/cloudevents+json (or application/json without a
ce-specversion header) and the whole event as the body, e.g.
  {"specversion":"1.0","id":"42","type":"greeting","source":"/my/app","data":{"name":"alice"}}
Binary mode: the attributes as headers (ce-specversion, ce-id, ce-type, ce-source, optional ce-time,
ce-subject …), the data as the body and its media type as content-type.
Batch mode is not supported.`;

/** Decides whether a submission is allowed (SUBMISSION_CHECK); the internal endpoints skip it. */
export type SubmissionCheck = (req: IncomingMessage, event: CloudEvent) => Promise<boolean>;

export interface EventsEndpointDeps {
  producer: FanoutProducer;
  duplicates: DuplicateWindow;
  check: SubmissionCheck;
  metrics: PublisherMetrics;
  logger: Logger;
  cors: CorsPolicy;
  maxEventBytes: number;
  /** MAX_EVENT_KEYS: a JSON body with more keys and array items is refused (413) before parsing. */
  maxEventKeys: number;
  /** MAX_JSON_DEPTH: an event nested deeper is refused (400). */
  maxJsonDepth: number;
}

export function createEventsEndpoint(deps: EventsEndpointDeps) {
  async function accept(
    req: IncomingMessage,
    res: ServerResponse,
    checked: boolean,
    extra: Record<string, string>,
  ) {
    if (!isTracingActive()) return acceptEvent(req, res, checked, extra, undefined);
    const span = new EventRequestSpan(req, checked ? EVENTS_PATH : requestPath(req));
    try {
      await acceptEvent(req, res, checked, extra, span);
    } finally {
      span.end(res.statusCode);
    }
  }

  async function acceptEvent(
    req: IncomingMessage,
    res: ServerResponse,
    checked: boolean,
    extra: Record<string, string>,
    span: EventRequestSpan | undefined,
  ) {
    const receivedAt = process.hrtime.bigint();
    const source = checked ? 'http' : 'http_internal';
    try {
      const body = await readBody(req, deps.maxEventBytes);
      if (isJson(req.headers['content-type']) && exceedsJsonMembers(body, deps.maxEventKeys))
        throw new JsonTooManyMembersError('The event', 'MAX_EVENT_KEYS', deps.maxEventKeys);
      const event = parseHttpEvent({ headers: req.headers, body });
      assertJsonDepth(event, deps.maxJsonDepth, 'the event');
      const reserved = reservedProblem(event);
      if (reserved) {
        deps.metrics.consumedFailed(source, 'http', 'invalid');
        return sendText(res, 400, `${reserved}\n`, extra);
      }
      const admit = async () => {
        if (checked && !(await deps.check(req, event))) {
          deps.metrics.consumedFailed(source, 'http', 'denied');
          return sendText(res, 403, 'Submission denied.', extra);
        }
        if (await deps.duplicates.seen(event)) {
          deps.metrics.consumedFailed(source, 'http', 'duplicate');
          return sendAccepted(res, serializeJsonEvent(event), { ...extra, ...duplicateHeaders });
        }
        const json = await deps.producer.publish(event, { source, topic: 'http', receivedAt });
        await deps.duplicates.remember(event);
        sendAccepted(res, json, extra);
      };
      await (span ? span.run(event, admit) : admit());
    } catch (err) {
      if (err instanceof InvalidCloudEventError || err instanceof JsonTooDeepError) {
        deps.metrics.consumedFailed(source, 'http', 'invalid');
        return sendText(res, 400, `${err.message}\n\n${usage}\n`, extra);
      }
      if (err instanceof UnsupportedCloudEventError) {
        deps.metrics.consumedFailed(source, 'http', 'unsupported');
        return sendText(res, 415, `${err.message}\n\n${usage}\n`, extra);
      }
      if (err instanceof HttpError) return sendText(res, err.status, err.message, extra);
      const outage = unavailabilityOf(err);
      if (outage) {
        deps.logger.warn({ err }, 'event refused: a dependency is unavailable');
        return sendUnavailable(res, outage.dependency, extra);
      }
      deps.logger.error({ err }, 'event could not be put on the fan-out stream');
      return sendText(res, 503, 'The event could not be accepted now; retry later.', {
        ...extra,
        'retry-after': '1',
      });
    }
  }

  return {
    // Not async: in the embedded gateway every public request passes here first, and a promise
    // for a path that is not ours cost each (an SSE connect of a reconnect storm) a turn.
    public: (req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> => {
      if (requestPath(req) !== EVENTS_PATH) return false;
      const cors = deps.cors.headers(req);
      if (req.method === 'OPTIONS') deps.cors.preflight(req, res, eventsPreflight);
      else if (req.method !== 'POST')
        sendText(res, 405, `Method not allowed.\n\n${usage}\n`, { allow: 'POST, OPTIONS', ...cors });
      else return accept(req, res, true, cors).then(() => true);
      return true;
    },
    internal: async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
      if (!MESSAGE_PATHS.includes(requestPath(req))) return false;
      if (req.method !== 'POST') sendText(res, 405, `Method not allowed.\n\n${usage}\n`, { allow: 'POST' });
      else await accept(req, res, false, {});
      return true;
    },
  };
}

/** A copy of an event accepted within the window; a page of another origin may read the header. */
const duplicateHeaders = {
  'gatehouse-duplicate': 'true',
  'access-control-expose-headers': 'gatehouse-duplicate',
};

function sendAccepted(res: ServerResponse, json: string, headers: Record<string, string>) {
  res.writeHead(202, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
    ...headers,
  });
  res.end(json);
}

/** `application/json`, `application/cloudevents+json` and every other `+json`: the bodies to count. */
function isJson(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}
