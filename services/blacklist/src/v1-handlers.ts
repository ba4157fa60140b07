/**
 * The deprecated `/v1/session-blacklist`, kept for old clients with its old answers: POST → 200
 * `{"sessionId", "validityInSeconds", "isBlacklisted": true}`, GET `/<id>` → always 200
 * `{"sessionId", "isBlacklisted": <bool>}`. It takes the same body as /v2 (a numeric string, as old
 * clients send, or a number).
 *
 * Every /v1 answer says it is deprecated: `Deprecation` (RFC 9745; the date /v2 replaced it, RIG
 * 2.3.0), `Sunset` (RFC 8594; BLACKLIST_V1_SUNSET) and a `Link` to the /v3 successor.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Params, sendJson } from '@gatehouse/service-kit';
import { readBlacklistRequest } from './blacklist-request.ts';
import { entryPath } from './entry-body.ts';
import type { HandlerDeps } from './handler-deps.ts';
import { sendFailure } from './request-failure.ts';

/** 2019-12-13, the release that introduced /v2/session-blacklist. */
export const v1DeprecatedAt = new Date('2019-12-13T00:00:00Z');

export function v1DeprecationHeaders(sunset: Date, successor: string): Record<string, string> {
  return {
    deprecation: `@${Math.floor(v1DeprecatedAt.getTime() / 1000)}`,
    sunset: sunset.toUTCString(),
    link: `<${successor}>; rel="successor-version"`,
  };
}

export function createV1Handlers(deps: HandlerDeps, sunset: Date) {
  return {
    async add(req: IncomingMessage, res: ServerResponse): Promise<void> {
      const headers = v1DeprecationHeaders(sunset, '/v3/session-blacklist');
      try {
        const { sessionId, validityInSeconds } = await readBlacklistRequest(req, deps.limits);
        const { entry, outcome } = await deps.blacklist.add(sessionId, validityInSeconds);
        deps.metrics.entryAdded('v1', outcome);
        deps.logger.info({ sessionId, validityInSeconds, outcome, version: 'v1' }, 'session blacklisted');
        const body = {
          sessionId,
          validityInSeconds: deps.blacklist.remainingSeconds(entry),
          isBlacklisted: true,
        };
        sendJson(res, 200, body, headers);
      } catch (err) {
        sendFailure(res, err, deps.logger, headers);
      }
    },

    async query(_req: IncomingMessage, res: ServerResponse, params: Params): Promise<void> {
      const sessionId = params['sessionId']!;
      const headers = v1DeprecationHeaders(sunset, entryPath('v3', sessionId));
      try {
        const entry = await deps.blacklist.lookup(sessionId);
        sendJson(res, 200, { sessionId, isBlacklisted: entry !== undefined }, headers);
      } catch (err) {
        sendFailure(res, err, deps.logger, headers);
      }
    },
  };
}
