/**
 * The origin behind Pushpin in the push-hub benchmark: every request is answered with a GRIP
 * instruction to hold it as an SSE stream on the channel `CHANNEL` (default `bench`), so Pushpin
 * keeps the client connection and the publisher's items reach it.
 */
import { createServer } from 'node:http';

const port = Number(process.env['PORT'] ?? 3000);
const channel = process.env['CHANNEL'] ?? 'bench';

createServer((_req, res) => {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'grip-hold': 'stream',
    'grip-channel': channel,
  });
  res.end(':stream held\n\n');
}).listen(port, '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
