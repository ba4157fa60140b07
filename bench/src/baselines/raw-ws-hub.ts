/**
 * B-ws (performance-anchors §5.3): the least a Node WebSocket hub can do with `ws` 8, deflate off.
 * Upgrades on `/ws` are kept by the server; `POST /publish` sends the body to every client as one
 * text frame, then answers 202. No pings, no subscriptions.
 *
 * Why this is the fair floor: it is what a competent `ws` hub does per event. The body is one
 * Buffer, made once and handed to every `send` with `binary: false` (no per-client string → UTF-8
 * encoding; `ws` writes the shared Buffer after its 2–4 byte header, server frames are not masked,
 * so the payload is never copied). Gatehouse's WebSocket transport does the same (one Buffer per
 * event), so the ratio measures what the hub does around the write, not how it encodes. A baseline
 * that `send`s a string per client would pay one encoding per client and flatter Gatehouse.
 */
import { createServer } from 'node:http';
import { WebSocketServer } from 'ws';

const port = Number(process.env['PORT'] ?? 3000);
const asText = { binary: false };

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/publish') {
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const payload = Buffer.concat(chunks);
    for (const client of wss.clients) client.send(payload, asText);
    res.writeHead(202).end();
  });
});
const wss = new WebSocketServer({ server, path: '/ws', perMessageDeflate: false });
// The accept queue Gatehouse's edge listens with (LISTEN_BACKLOG), as B-sse (raw-sse-hub.ts).
server.listen(port, '127.0.0.1', 4096);
process.on('SIGTERM', () => process.exit(0));
