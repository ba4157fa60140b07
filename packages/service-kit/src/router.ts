/**
 * A minimal method + path router for node:http. Patterns are literal segments and `:name`
 * parameters; a path that matches with another method answers 405 with an `allow` header.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './http-response.ts';

export type Params = Record<string, string>;
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, params: Params) => unknown;

interface Route {
  method: string;
  segments: string[];
  handler: RouteHandler;
}

export class Router {
  private readonly routes: Route[] = [];

  on(method: string, pattern: string, handler: RouteHandler): this {
    this.routes.push({ method: method.toUpperCase(), segments: split(pattern), handler });
    return this;
  }
  get(pattern: string, handler: RouteHandler): this {
    return this.on('GET', pattern, handler);
  }
  post(pattern: string, handler: RouteHandler): this {
    return this.on('POST', pattern, handler);
  }
  put(pattern: string, handler: RouteHandler): this {
    return this.on('PUT', pattern, handler);
  }
  delete(pattern: string, handler: RouteHandler): this {
    return this.on('DELETE', pattern, handler);
  }

  /** Handles the request when a route's path matches; returns false when no route's path does. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    const segments = split(path);
    const allowed: string[] = [];
    for (const route of this.routes) {
      const params = match(route.segments, segments);
      if (!params) continue;
      if (route.method === req.method || (route.method === 'GET' && req.method === 'HEAD')) {
        await route.handler(req, res, params);
        return true;
      }
      allowed.push(route.method);
    }
    if (allowed.length === 0) return false;
    sendJson(
      res,
      405,
      { error: `method ${req.method} not allowed` },
      { allow: [...new Set(allowed)].join(', ') },
    );
    return true;
  }
}

function split(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

function match(pattern: string[], path: string[]): Params | undefined {
  if (pattern.length !== path.length) return undefined;
  const params: Params = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const s = path[i]!;
    if (p.startsWith(':')) {
      try {
        params[p.slice(1)] = decodeURIComponent(s);
      } catch {
        return undefined;
      }
    } else if (p !== s) return undefined;
  }
  return params;
}
