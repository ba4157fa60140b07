/**
 * B-ws (performance-anchors §5.3): the least a Node WebSocket hub can do with `ws` 8, deflate off.
 * Upgrades on `/ws` are kept by the server; `POST /publish` `send`s the body as one text frame to
 * every client, then answers 202. No pings, no subscriptions.
 */
import { createServer } from 'node:http';
import { WebSocketServer } from 'ws';

const port = Number(process.env['PORT'] ?? 3000);

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/publish') {
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const text = Buffer.concat(chunks).toString();
    for (const client of wss.clients) client.send(text);
    res.writeHead(202).end();
  });
});
const wss = new WebSocketServer({ server, path: '/ws', perMessageDeflate: false });
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
