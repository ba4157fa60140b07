/**
 * `make run`'s demo page of `@gatehouse/client`, on the public edge under /_gw/demo/: the page
 * (examples/client-demo/index.html, told the relay's port), its icon (linked, so a browser asks no
 * /favicon.ico, which nothing serves), the client bundle `make run` built (DEMO_CLIENT_BUNDLE), and
 * `POST /_gw/demo/cut`, which cuts every connection of the relay the
 * page's client goes through. Only when DEMO_CLIENT_BUNDLE is set: the image and the chart never
 * serve it.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { fileURLToPath } from 'node:url';
import { type GatewayService, requestPath, sendText } from '@gatehouse/service-kit';
import type { CutRelay } from './cut-relay.ts';

const demoFolder = new URL('../../../examples/client-demo/', import.meta.url);
const pagePath = fileURLToPath(new URL('index.html', demoFolder));
const iconPath = fileURLToPath(new URL('favicon.svg', demoFolder));

export async function createDemoPage(bundleFile: string, relay: CutRelay): Promise<GatewayService> {
  const page = (await readFile(pagePath, 'utf8')).replace(
    '<meta charset="utf-8">',
    `<meta charset="utf-8">\n  <meta name="relay-port" content="${relay.port}">`,
  );
  const bundle = await readFile(bundleFile, 'utf8');
  const icon = await readFile(iconPath);
  const inline = { scripts: hashesOf(page, 'script'), styles: hashesOf(page, 'style') };
  return {
    name: 'demo-page',
    public(req, res) {
      const path = requestPath(req);
      if (!path.startsWith('/_gw/demo')) return false;
      if (path === '/_gw/demo' || path === '/_gw/demo/') {
        res.writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'cache-control': 'no-cache',
          'content-security-policy': demoPagePolicy(inline, relayOrigins(req, relay.port)),
          'x-content-type-options': 'nosniff',
        });
        res.end(page);
      } else if (path === '/_gw/demo/client.js') {
        res.writeHead(200, {
          'content-type': 'text/javascript; charset=utf-8',
          'cache-control': 'no-cache',
          'x-content-type-options': 'nosniff',
        });
        res.end(bundle);
      } else if (path === '/_gw/demo/favicon.svg') {
        res.writeHead(200, {
          'content-type': 'image/svg+xml',
          'cache-control': 'no-cache',
          'x-content-type-options': 'nosniff',
        });
        res.end(icon);
      } else if (path === '/_gw/demo/cut' && req.method === 'POST') {
        sendText(res, 200, `${relay.cut()} connections cut`);
      } else {
        sendText(res, 404, 'Not found.');
      }
      return true;
    },
  };
}

/**
 * A strict policy: nothing loads but this page's own client bundle, its one inline script and style
 * (by hash: an injected one has another), and connections to the gateway and to the relay's port.
 */
export function demoPagePolicy(inline: { scripts: string[]; styles: string[] }, relay: string[]): string {
  return [
    "default-src 'none'",
    `script-src 'self' ${inline.scripts.join(' ')}`,
    `style-src ${inline.styles.join(' ')}`,
    `connect-src 'self' ${relay.join(' ')}`,
    "img-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** 'sha256-…' of each inline element of this kind (the page's own <script> / <style> blocks). */
function hashesOf(page: string, element: 'script' | 'style'): string[] {
  const blocks = page.matchAll(new RegExp(`<${element}(?![^>]*\\bsrc=)[^>]*>([\\s\\S]*?)</${element}>`, 'g'));
  return [...blocks].map((m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`);
}

/**
 * The relay the page's client connects to: the page's host name on the relay's port, over HTTP and
 * WebSocket. The name is the request's Host, taken only when it is a plain host name or address.
 */
function relayOrigins(req: IncomingMessage, port: number): string[] {
  const host = req.headers.host ?? '';
  const name = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d+)?$/.exec(host)?.[1];
  if (name === undefined) return [];
  return ['http', 'https', 'ws', 'wss'].map((scheme) => `${scheme}://${name}:${port}`);
}
