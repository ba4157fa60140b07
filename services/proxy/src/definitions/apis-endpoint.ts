/**
 * `/v2/apis` and `/v3/apis` on the internal API (reference §1.2.1): list, get, create (201), update
 * (200, a shallow merge over the current definition, as RIG did), delete (204); 404 for an unknown
 * id, 409 when creating an existing one, 400 with the full error map for an invalid definition (and
 * nothing is changed), 415 for a body that is not JSON, 400 for one nested deeper than
 * MAX_JSON_DEPTH. A PUT's body is validated before the id is looked up (the reference's order),
 * then the merged definition; for an unknown id that is the body alone, so `{}` is a 400 with the
 * map, as in RIG, and only a whole valid definition a 404.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  assertJsonDepth,
  defaultMaxJsonDepth,
  HttpError,
  type Params,
  Router,
  readBody,
  sendJson,
} from '@gatehouse/service-kit';
import { validateApi, validateApiUpdate } from './api-validation.ts';
import type { DefinitionStore } from './definition-store.ts';
import type { TargetAllowList } from '../forwarding/index.ts';

const maxDefinitionBytes = 1024 * 1024;

export interface ApisEndpointOptions {
  definitions: DefinitionStore;
  env?: NodeJS.ProcessEnv;
  /** PROXY_TARGET_ALLOW: a target address it refuses is a 400. */
  targets?: TargetAllowList;
  /** Told after a successful write, so this replica applies it without waiting for the notification. */
  onChange?: (id: string) => Promise<void>;
  /** MAX_JSON_DEPTH: a body nested deeper is refused (400) before it is validated. */
  maxJsonDepth?: number;
}

export function createApisEndpoint(options: ApisEndpointOptions): Router {
  const { definitions } = options;
  const router = new Router();
  const changed = async (id: string) => options.onChange?.(id);
  const validation = { env: options.env, targets: options.targets };
  const readJson = (req: IncomingMessage) => readJsonBody(req, options.maxJsonDepth ?? defaultMaxJsonDepth);

  for (const version of ['v2', 'v3']) {
    const base = `/${version}/apis`;
    router.get(base, async (_req, res) => sendJson(res, 200, await definitions.list()));

    router.get(`${base}/:id`, async (_req, res, { id }: Params) => {
      const api = await definitions.get(id!);
      if (api === undefined) return notFound(res, id!);
      sendJson(res, 200, api);
    });

    router.post(base, async (req, res) => {
      const body = await readJson(req);
      const result = validateApi(body, validation);
      if (!result.ok) return sendJson(res, 400, result.errors);
      if (!(await definitions.create(result.api)))
        return sendJson(res, 409, { message: `API with id=${result.api.id} already exists.` });
      await changed(result.api.id);
      sendJson(res, 201, { message: 'ok' });
    });

    router.put(`${base}/:id`, async (req, res, { id }: Params) => {
      const body = await readJson(req);
      if (!isObject(body)) return sendJson(res, 400, { api: [{ api: 'must be an object' }] });
      if (body['id'] !== undefined && body['id'] !== id)
        return sendJson(res, 400, { api: [{ id: 'must match the id in the path' }] });
      // The body first (the reference's order): an invalid one is 400 even for an unknown id.
      const invalid = validateApiUpdate(body, id!, validation);
      if (invalid !== undefined) return sendJson(res, 400, invalid);
      const current = await definitions.get(id!);
      // Nothing to merge with: the body alone must be a whole definition, as RIG checked it.
      const result = validateApi({ ...current, ...body, id }, validation);
      if (!result.ok) return sendJson(res, 400, result.errors);
      if (current === undefined) return notFound(res, id!);
      await definitions.update(result.api, current);
      await changed(id!);
      sendJson(res, 200, { message: 'ok' });
    });

    router.delete(`${base}/:id`, async (_req, res, { id }: Params) => {
      if (!(await definitions.delete(id!))) return notFound(res, id!);
      await changed(id!);
      res.writeHead(204).end();
    });
  }
  return router;
}

function notFound(res: ServerResponse, id: string): void {
  sendJson(res, 404, { message: `API with id=${id} doesn't exist.` });
}

async function readJsonBody(req: IncomingMessage, maxJsonDepth: number): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (type !== 'application/json' && !type.endsWith('+json'))
    throw new HttpError(415, 'the body must be JSON (content-type: application/json)');
  const body = await readBody(req, maxDefinitionBytes);
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new HttpError(400, `the body is not valid JSON: ${(err as Error).message}`);
  }
  assertJsonDepth(json, maxJsonDepth, 'the API definition');
  return json;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
