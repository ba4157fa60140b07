/**
 * `POST /v1/responses`, `/v2/responses` (a CloudEvent carrying `gw.correlation`) and
 * `POST /v3/responses` (binary: `gw-correlation` and `gw-response-code` headers, the body as is; or,
 * with `content-type: application/cloudevents+json`, a structured CloudEvent whose payload carries
 * `gw.correlation` and `gw.responseCode`, as on /v1) complete a request waiting with
 * `response_from: http_async`, whichever replica holds it.
 * Answers: 202 when the waiting request took the response; 400 for a malformed message or a forged
 * correlation id; 404 when no request waits for it any more (answered, timed out, replica gone).
 * RIG accepted v2 responses and then dropped them (reference §9.6); here both forms work.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { essence, parseHttpEvent } from '@gatehouse/cloudevents';
import { Router, readBody, sendText } from '@gatehouse/service-kit';
import { type ParsedResponse, parseBinaryResponse, readCloudEventResponse } from './response-message.ts';
import type { DeliveryResult, ResponseRouter } from './response-router.ts';

export interface ResponsesEndpointOptions {
  router: ResponseRouter;
  maxBodyBytes: number;
  /** MAX_JSON_DEPTH: a response event nested deeper is refused (400), as a published one. */
  maxJsonDepth: number;
  onDelivery?: (result: DeliveryResult | 'bad_request') => void;
}

export function createResponsesEndpoint(options: ResponsesEndpointOptions): Router {
  const routes = new Router();
  const cloudEventForm = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req, options.maxBodyBytes);
    await answer(res, cloudEventResponse(req, body, options.maxJsonDepth), options);
  };
  routes.post('/v1/responses', cloudEventForm);
  routes.post('/v2/responses', cloudEventForm);
  routes.post('/v3/responses', async (req, res) => {
    const body = await readBody(req, options.maxBodyBytes);
    if (isStructuredCloudEvent(req))
      return answer(res, cloudEventResponse(req, body, options.maxJsonDepth), options);
    const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
    await answer(res, parseBinaryResponse(req.headers, body, query.get('correlation') ?? undefined), options);
  });
  return routes;
}

function cloudEventResponse(req: IncomingMessage, body: Buffer, maxJsonDepth: number): ParsedResponse {
  return readCloudEventResponse(() => parseHttpEvent({ headers: req.headers, body }), maxJsonDepth);
}

/** CloudEvents' structured mode is named by its media type; any other body is a binary response. */
function isStructuredCloudEvent(req: IncomingMessage): boolean {
  return essence(req.headers['content-type']) === 'application/cloudevents+json';
}

async function answer(
  res: ServerResponse,
  parsed: ParsedResponse,
  options: ResponsesEndpointOptions,
): Promise<void> {
  if (!parsed.ok) {
    options.onDelivery?.('bad_request');
    return sendText(res, 400, `Failed to parse request body: ${parsed.error}`);
  }
  const result = await options.router.deliver(parsed.correlation, parsed.response);
  options.onDelivery?.(result);
  if (result === 'delivered') return sendText(res, 202, 'message sent to correlated reverse proxy request');
  if (result === 'forged') return sendText(res, 400, 'Failed to parse request body: invalid correlation id');
  sendText(res, 404, 'no request is waiting for this correlation id (answered, timed out or gone)');
}
