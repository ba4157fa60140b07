/**
 * A connect hook for tests: a real HTTP server on a free port that answers each call with `answer`
 * and keeps every call it got.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HookCall {
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
}

export type Answer = (res: ServerResponse, call: HookCall) => void;

export const json =
  (status: number, body: unknown): Answer =>
  (res) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

/** The hook: answers each call with `answer`, and keeps every call it got. */
export class Hook {
  readonly calls: HookCall[] = [];
  answer: Answer = json(200, {});
  readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const call = { body: JSON.parse(Buffer.concat(chunks).toString()), headers: req.headers };
      this.calls.push(call);
      this.answer(res, call);
    });
  });
  async listen(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await new Promise((r) => this.server.once('listening', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/connect`;
  }
  close(): void {
    this.server.closeAllConnections();
    this.server.close();
  }
}
