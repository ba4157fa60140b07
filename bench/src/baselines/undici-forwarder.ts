/**
 * B-proxy (performance-anchors §6.3): the minimal forwarder a proxy is measured against — one
 * undici Pool to the backend, every request forwarded as is, the response body buffered and sent
 * with content-length (the fastest shape on this box, §5.2). No matching, no headers rules.
 */
import { createServer } from 'node:http';
import { Pool } from 'undici';

const port = Number(process.env['PORT'] ?? 3101);
const pool = new Pool(process.env['TARGET'] ?? 'http://127.0.0.1:3100', { connections: 256 });

createServer(async (req, res) => {
  try {
    const { host: _host, connection: _connection, ...headers } = req.headers;
    const upstream = await pool.request({
      path: req.url ?? '/',
      method: (req.method ?? 'GET') as 'GET',
      headers: headers as Record<string, string>,
    });
    const body = Buffer.from(await upstream.body.arrayBuffer());
    res.writeHead(upstream.statusCode, {
      'content-type': String(upstream.headers['content-type'] ?? 'application/octet-stream'),
      'content-length': body.length,
    });
    res.end(body);
  } catch {
    res.writeHead(502).end();
  }
}).listen(port, '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
