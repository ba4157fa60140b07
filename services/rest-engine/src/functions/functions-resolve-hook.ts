/**
 * Lets a functions folder anywhere on disk `import … from '@gatehouse/functions'`: a module resolve
 * hook maps that specifier to the SDK in this repository, so such a folder needs no node_modules and
 * shares the engine's copy of the SDK (one EventEnvelope class, one AppException class).
 */
import { registerHooks } from 'node:module';

// The built engine (dist/, tools/build.ts) shares the built SDK, the sources share the sources.
const sdkEntry = import.meta.url.endsWith('.ts') ? 'src/index.ts' : 'dist/index.js';
const sdkUrl = new URL(`../../../../packages/functions/${sdkEntry}`, import.meta.url).href;
const specifier = '@gatehouse/functions';
let installed = false;

export function installFunctionsResolveHook(): void {
  if (installed) return;
  installed = true;
  registerHooks({
    resolve(spec, context, nextResolve) {
      if (spec === specifier) return { url: sdkUrl, shortCircuit: true };
      return nextResolve(spec, context);
    },
  });
}
