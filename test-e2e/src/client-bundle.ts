/** `@gatehouse/client` bundled for the browser by esbuild, minified, as a user's build would make it. */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const clientEntry = fileURLToPath(new URL('../../packages/client/src/index.ts', import.meta.url));

/** The ES module's text, to serve to a page as `/client.js`. */
export async function buildClientBundle(): Promise<string> {
  const bundle = await build({
    entryPoints: [clientEntry],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
  });
  return bundle.outputFiles[0]!.text;
}
