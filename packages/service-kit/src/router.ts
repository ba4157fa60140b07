/**
 * A service's internal routes on an express Router: patterns are express paths (literal segments
 * and `:name` parameters, matched case-sensitively). A path that matches with another method
 * answers 405 with an `allow` header, which express does not do on its own.
 *
 * `handle` lets a service's RequestHandler ask the router and learn whether it answered, so a
 * service keeps one handler for the host (standalone or embedded) whatever routes it has.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import { sendJson } from './http-response.ts';

export type Params = Record<string, string>;
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, params: Params) => unknown;

/** Where a request's `handle` call waits for the route that took the request. */
const settle = Symbol('router.settle');
type Settle = (err: unknown, claimed: boolean) => void;
type Pending = IncomingMessage & { [settle]?: Settle };

function settleWith(req: IncomingMessage, err: unknown, claimed: boolean): void {
  (req as Pending)[settle]?.(err, claimed);
}

export class Router {
  private readonly router = express.Router({ caseSensitive: true });
  /** Methods per pattern, in the order added; the 405 answers are mounted after the routes. */
  private readonly methods = new Map<string, string[]>();
  private sealed = false;

  on(method: string, pattern: string, handler: RouteHandler): this {
    if (this.sealed) throw new Error(`route ${method} ${pattern} added after the router answered`);
    const upper = method.toUpperCase();
    const route = this.router.route(pattern);
    const run = async (req: express.Request, res: express.Response) => {
      try {
        await handler(req, res, req.params as Params);
        settleWith(req, undefined, true);
      } catch (err) {
        settleWith(req, err, true);
      }
    };
    if (upper === 'GET') route.get(run);
    else route[upper.toLowerCase() as 'post' | 'put' | 'delete' | 'patch'](run);
    this.methods.set(pattern, [...(this.methods.get(pattern) ?? []), upper]);
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
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    this.seal();
    return new Promise<boolean>((resolve, reject) => {
      (req as Pending)[settle] = (err, claimed) => {
        delete (req as Pending)[settle];
        if (err === undefined) resolve(claimed);
        else reject(err);
      };
      this.router(req as express.Request, res as express.Response, (err?: unknown) =>
        settleWith(req, err === 'route' || err === 'router' ? undefined : err, false),
      );
    });
  }

  private seal(): void {
    if (this.sealed) return;
    this.sealed = true;
    for (const [pattern, methods] of this.methods) {
      const allow = [...new Set(methods)].join(', ');
      this.router.all(pattern, (req, res) => {
        sendJson(res, 405, { error: `method ${req.method} not allowed` }, { allow });
        settleWith(req, undefined, true);
      });
    }
  }
}
