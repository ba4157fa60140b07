/**
 * `make run`'s demo page of `@gatehouse/client`, on the public edge under /_gw/demo/: the page
 * (examples/client-demo/index.html, told the relay's port), the client bundle `make run` built
 * (DEMO_CLIENT_BUNDLE), and `POST /_gw/demo/cut`, which cuts every connection of the relay the
 * page's client goes through. Only when DEMO_CLIENT_BUNDLE is set: the image and the chart never
 * serve it.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { type GatewayService, requestPath, sendText } from '@gatehouse/service-kit';
import type { CutRelay } from './cut-relay.ts';

const pagePath = fileURLToPath(new URL('../../../examples/client-demo/index.html', import.meta.url));

export async function createDemoPage(bundleFile: string, relay: CutRelay): Promise<GatewayService> {
  const page = (await readFile(pagePath, 'utf8')).replace(
    '<meta charset="utf-8">',
    `<meta charset="utf-8">\n  <meta name="relay-port" content="${relay.port}">`,
  );
  const bundle = await readFile(bundleFile, 'utf8');
  return {
    name: 'demo-page',
    public(req, res) {
      const path = requestPath(req);
      if (!path.startsWith('/_gw/demo')) return false;
      if (path === '/_gw/demo' || path === '/_gw/demo/') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' });
        res.end(page);
      } else if (path === '/_gw/demo/client.js') {
        res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' });
        res.end(bundle);
      } else if (path === '/_gw/demo/cut' && req.method === 'POST') {
        sendText(res, 200, `${relay.cut()} connections cut`);
      } else {
        sendText(res, 404, 'Not found.');
      }
      return true;
    },
  };
}
