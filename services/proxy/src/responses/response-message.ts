/**
 * The two shapes a correlated response comes in.
 *
 * Binary (Kafka response messages, `POST /v3/responses`): the body is the response body; the header
 * `gw-correlation` names the request, `gw-response-code` its status (200 when absent; a value that
 * is not an integer 200–599 is refused: a 1xx is no final answer, so the waiting client would
 * hang on it); the other headers become response headers. RIG copied
 * every request header of a /v3/responses POST into the client's response (`host`, `user-agent` …);
 * here headers that only make sense on the way in are left out.
 *
 * CloudEvent (`POST /v1/responses`, Kinesis records, which have no headers): `gw.correlation` names
 * the request, `gw.responseCode` gives the status; the client gets the event's data with its
 * content type (RIG 2.x sent the whole event JSON; the data is what the waiting client asked for).
 */
import {
  type CloudEvent,
  correlationId,
  dataContentType,
  encodeData,
  gwExtension,
} from '@gatehouse/cloudevents';
import { assertJsonDepth, hopByHopHeaders } from '@gatehouse/service-kit';
import type { CorrelatedResponse } from './pending-responses.ts';

export const correlationHeader = 'gw-correlation';
export const responseCodeHeader = 'gw-response-code';

export type ParsedResponse =
  | { ok: true; correlation: string; response: CorrelatedResponse }
  | { ok: false; error: string };

const notPassedOn = new Set([
  correlationHeader,
  responseCodeHeader,
  'host',
  'user-agent',
  'accept',
  'accept-encoding',
  'accept-language',
  'content-length',
  ...hopByHopHeaders,
  'expect',
  'authorization',
  'proxy-authorization',
  'cookie',
  'forwarded',
  'via',
  'origin',
  'referer',
  'range',
  'traceparent',
  'tracestate',
]);

export function parseBinaryResponse(
  headers: Record<string, string | string[] | undefined>,
  body: Buffer,
  fallbackCorrelation?: string,
): ParsedResponse {
  const lower: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) lower[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  const correlation = lower[correlationHeader] ?? fallbackCorrelation;
  if (correlation === undefined || correlation === '')
    return { ok: false, error: `the ${correlationHeader} header is missing` };
  const status = parseStatus(lower[responseCodeHeader]);
  if (status === undefined)
    return {
      ok: false,
      error: `${responseCodeHeader} must be an integer from 200 to 599, got ${lower[responseCodeHeader]}`,
    };
  const passed: Record<string, string> = {};
  for (const [name, value] of Object.entries(lower)) {
    if (
      notPassedOn.has(name) ||
      name.startsWith('x-forwarded-') ||
      name.startsWith('if-') ||
      name.startsWith(':')
    )
      continue;
    passed[name] = value;
  }
  return { ok: true, correlation, response: { status, headers: passed, body } };
}

export function parseCloudEventResponse(event: CloudEvent): ParsedResponse {
  const correlation = correlationId(event);
  if (correlation === undefined) return { ok: false, error: 'the event has no gw.correlation' };
  const code = gwExtension(event)?.['responseCode'];
  const status = parseStatus(code === undefined ? undefined : String(code));
  if (status === undefined)
    return { ok: false, error: `gw.responseCode must be an integer from 200 to 599, got ${String(code)}` };
  const body = encodeData(event);
  const contentType = dataContentType(event) ?? 'application/json';
  return {
    ok: true,
    correlation,
    response: { status, headers: body.length > 0 ? { 'content-type': contentType } : {}, body },
  };
}

/**
 * parseCloudEventResponse of the event `read` parses; a message that is no CloudEvent, or nests
 * deeper than `maxJsonDepth` (MAX_JSON_DEPTH, as a published event), is refused with why.
 */
export function readCloudEventResponse(read: () => CloudEvent, maxJsonDepth: number): ParsedResponse {
  try {
    const event = read();
    assertJsonDepth(event, maxJsonDepth, 'the response event');
    return parseCloudEventResponse(event);
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

function parseStatus(text: string | undefined): number | undefined {
  if (text === undefined || text.trim() === '') return 200;
  if (!/^\d{3}$/.test(text.trim())) return undefined;
  const status = Number(text.trim());
  return status >= 200 && status <= 599 ? status : undefined;
}
