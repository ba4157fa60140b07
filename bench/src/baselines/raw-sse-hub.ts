/**
 * B-sse (performance-anchors §5.3): the least a Node SSE hub can do. `GET /sse` holds the response
 * open in a set; `POST /publish` builds the SSE frame once from the body and `res.write`s that one
 * Buffer to every held response, then answers 202. No ids, no heartbeat, no subscriptions.
 *
 * Why this is the fair floor: per event and subscriber it does only what any `node:http` SSE hub
 * must, one `res.write` of bytes encoded once (a string would be encoded to UTF-8 again for every
 * subscriber); per connection it keeps only the response object Node already made. Anything a
 * product adds (ids, subscriptions, filters, slow-consumer checks) is what the ratio measures.
 */
import { createServer, type ServerResponse } from 'node:http';

const port = Number(process.env['PORT'] ?? 3000);
const clients = new Set<ServerResponse>();

createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/publish') {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const frame = Buffer.from(`event: bench\ndata: ${Buffer.concat(chunks).toString()}\n\n`);
      for (const client of clients) client.write(frame);
      res.writeHead(202).end();
    });
    return;
  }
  if (req.method === 'GET' && req.url === '/sse') {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    clients.add(res);
    res.on('close', () => clients.delete(res));
    return;
  }
  res.writeHead(404).end();
  // The accept queue Gatehouse's edge listens with (LISTEN_BACKLOG): with Node's default of 511 a
  // burst's connects past it were dropped into TCP's retransmission back-off (bursts of 45–69 s).
}).listen(port, '127.0.0.1', 4096);
process.on('SIGTERM', () => process.exit(0));
