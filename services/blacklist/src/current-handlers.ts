/**
 * `/v2/session-blacklist` and `/v3/session-blacklist` (identical apart from the prefix, as in RIG):
 * - POST `{"sessionId", "validityInSeconds"}` → 201 Created, `Location: /vN/session-blacklist/<id>`,
 *   the entry as JSON (its validity is the effective one: an existing longer entry is kept).
 * - GET `/<id>` → 200 with the entry when blacklisted, 404 `Not found.` when not.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Params, sendJson, sendText } from '@gatehouse/service-kit';
import { readBlacklistRequest } from './blacklist-request.ts';
import { entryBody, entryPath } from './entry-body.ts';
import type { HandlerDeps } from './handler-deps.ts';
import { sendFailure } from './request-failure.ts';

export function createCurrentHandlers(deps: HandlerDeps, version: 'v2' | 'v3') {
  return {
    async add(req: IncomingMessage, res: ServerResponse): Promise<void> {
      try {
        const { sessionId, validityInSeconds } = await readBlacklistRequest(req, deps.limits);
        const { entry, outcome } = await deps.blacklist.add(sessionId, validityInSeconds);
        deps.metrics.entryAdded(version, outcome);
        deps.logger.info({ sessionId, validityInSeconds, outcome, version }, 'session blacklisted');
        sendJson(res, 201, entryBody(entry, deps.blacklist), { location: entryPath(version, sessionId) });
      } catch (err) {
        sendFailure(res, err, deps.logger);
      }
    },

    async query(_req: IncomingMessage, res: ServerResponse, params: Params): Promise<void> {
      try {
        const entry = await deps.blacklist.lookup(params['sessionId']!);
        if (entry === undefined) return sendText(res, 404, 'Not found.');
        sendJson(res, 200, entryBody(entry, deps.blacklist));
      } catch (err) {
        sendFailure(res, err, deps.logger);
      }
    },
  };
}
