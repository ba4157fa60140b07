/**
 * B-node: the bare node:http hello world every HTTP benchmark compares against, in the shape of
 * fastify/benchmarks' `bare` server (the JSON body is built per request, as a handler would).
 */
import { createServer } from 'node:http';

const port = Number(process.env['PORT'] ?? 3000);
createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ hello: 'world' }));
}).listen(port, '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
