/**
 * The files of the operator console (`GET /dashboard`): its page, script and style from
 * src/console/page/, and the charting library — Vega and Vega-Lite, BSD-3-Clause — from node_modules, so
 * the page needs no network beyond this API. Vega compiles chart expressions with `Function`, which
 * a strict Content-Security-Policy forbids; vega-interpreter (BSD-3-Clause) evaluates them instead.
 * It is an ES module importing three helpers from vega-util: served with that import bound to the
 * same helpers of the Vega bundle already on the page.
 *
 * The page links its icon (favicon.svg), so a browser does not ask the API's /favicon.ico for one.
 *
 * These files carry no data, so they are served without INTERNAL_API_TOKEN (internal-api-auth.ts):
 * a browser cannot send a bearer token when it navigates. The page asks the operator for the token
 * and sends it on every data request (docs/security.md).
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { CONSOLE_FILE_PATHS, readOnlyMethod, requestPath } from '@gatehouse/service-kit';

interface ConsoleFile {
  body: Buffer;
  type: string;
  cacheControl: string;
}

/** The console's own files change with the release: revalidated. The library's are versioned. */
const fresh = 'no-cache';
const versioned = 'public, max-age=86400';

/** Scripts only from this origin, no inline script or style, data only from this API. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const html = 'text/html; charset=utf-8';
const js = 'text/javascript; charset=utf-8';
const css = 'text/css; charset=utf-8';
const svg = 'image/svg+xml';

function own(name: string): Buffer {
  return readFileSync(new URL(`./page/${name}`, import.meta.url));
}

function library(pkg: string, file: string): Buffer {
  return readFileSync(fileURLToPath(new URL(file, import.meta.resolve(pkg))));
}

/** vega-interpreter with its vega-util import bound to the Vega bundle's (window.vega). */
function interpreter(): Buffer {
  const source = library('vega-interpreter', './vega-interpreter.js').toString('utf8');
  const bound = source.replace(
    /^import \{([^}]*)\} from 'vega-util';$/m,
    (_all, names: string) => `const {${names}} = globalThis.vega;`,
  );
  if (bound === source) throw new Error('vega-interpreter: its vega-util import was not found');
  return Buffer.from(bound);
}

/** Read once at start: a missing file fails the replica's start, not an operator's page load. */
function loadFiles(): Map<string, ConsoleFile> {
  const page: ConsoleFile = { body: own('index.html'), type: html, cacheControl: fresh };
  return new Map([
    ['/dashboard', page],
    ['/dashboard/', page],
    ['/dashboard/console.js', { body: own('console.js'), type: js, cacheControl: fresh }],
    ['/dashboard/console.css', { body: own('console.css'), type: css, cacheControl: fresh }],
    ['/dashboard/favicon.svg', { body: own('favicon.svg'), type: svg, cacheControl: fresh }],
    [
      '/dashboard/assets/vega.min.js',
      { body: library('vega', './vega.min.js'), type: js, cacheControl: versioned },
    ],
    [
      '/dashboard/assets/vega-lite.min.js',
      { body: library('vega-lite', './vega-lite.min.js'), type: js, cacheControl: versioned },
    ],
    ['/dashboard/assets/vega-interpreter.js', { body: interpreter(), type: js, cacheControl: versioned }],
  ]);
}

export function createConsoleFiles() {
  const files = loadFiles();
  // The token check leaves exactly these paths open: serving another would need the token.
  const unlisted = [...files.keys()].filter((p) => !CONSOLE_FILE_PATHS.includes(p));
  if (unlisted.length > 0) throw new Error(`console files not open in internal-api-auth.ts: ${unlisted}`);
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const path = requestPath(req);
    const file = files.get(path);
    if (!file) return false;
    if (!readOnlyMethod(req, res)) return true;
    // The page's links are relative to …/dashboard (so a path prefix at the edge is kept).
    if (path === '/dashboard/') {
      res.writeHead(301, { location: '../dashboard', 'cache-control': versioned }).end();
      return true;
    }
    res.writeHead(200, {
      'content-type': file.type,
      'content-length': file.body.length,
      'cache-control': file.cacheControl,
      'content-security-policy': CONSOLE_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
    res.end(req.method === 'HEAD' ? undefined : file.body);
    return true;
  };
}
