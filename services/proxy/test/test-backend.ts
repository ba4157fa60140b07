/** A real HTTP backend for the proxy tests: records what reached it and answers as told. */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  bodyBytes: number;
  body: Buffer | undefined;
}

export type BackendHandler = (req: IncomingMessage, res: ServerResponse, seen: SeenRequest) => void;

export interface TestBackend {
  port: number;
  seen: SeenRequest[];
  /** Replaced per test; the default echoes the request as JSON. */
  handler: BackendHandler;
  close(): Promise<void>;
}

/** Bodies up to this size are kept; bigger ones are only counted (the 50 MB upload). */
const keptBodyBytes = 1024 * 1024;

export const echo: BackendHandler = (req, res, seen) => {
  const body = JSON.stringify({
    method: seen.method,
    url: seen.url,
    headers: seen.headers,
    bodyBytes: seen.bodyBytes,
    body: seen.body?.toString('utf8'),
  });
  res.writeHead(200, { 'Content-Type': 'application/json', 'X-Backend': 'Echo' });
  res.end(req.method === 'HEAD' ? undefined : body);
};

export async function startBackend(): Promise<TestBackend> {
  const backend: TestBackend = {
    port: 0,
    seen: [],
    handler: echo,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const seen: SeenRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      bodyBytes: 0,
      body: undefined,
    };
    req.on('data', (c: Buffer) => {
      bytes += c.length;
      if (bytes <= keptBodyBytes) chunks.push(c);
    });
    req.on('end', () => {
      seen.bodyBytes = bytes;
      seen.body = bytes <= keptBodyBytes ? Buffer.concat(chunks) : undefined;
      backend.seen.push(seen);
      backend.handler(req, res, seen);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  backend.port = (server.address() as AddressInfo).port;
  return backend;
}
