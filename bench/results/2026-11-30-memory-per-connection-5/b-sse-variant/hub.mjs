// B-sse (bench/src/baselines/raw-sse-hub.ts) with one switch: RELEASE=1 sends `connection: close`
// and gives node's HTTP parser back after the head, through service-kit's own function. A
// throwaway for the memory-per-connection-5 round: what the technique alone saves in a bare hub.
import { createServer } from 'node:http';
import { releaseHttpParserSoon } from '../../../../packages/service-kit/src/http-parser-release.ts';

const release = process.env.RELEASE === '1';
const clients = new Set();
createServer((req, res) => {
  if (req.url === '/gc') {
    globalThis.gc();
    globalThis.gc();
    res.end(String(process.memoryUsage().rss));
    return;
  }
  if (req.url === '/count') return void res.end(String(clients.size));
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    ...(release && { connection: 'close' }),
  });
  res.flushHeaders();
  clients.add(res);
  res.on('close', () => clients.delete(res));
  if (release) releaseHttpParserSoon(req, res);
}).listen(Number(process.env.PORT), '127.0.0.1', 4096);
