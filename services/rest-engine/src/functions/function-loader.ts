/**
 * Loads function modules from the folders in `functions.path`. Every `.ts`, `.mts`, `.js` or `.mjs`
 * file directly in a folder (not in sub-folders, which are for helpers) must default-export a
 * registration made with `defineFunction`, or a list of them. `.ts` files load as they are (Node's
 * type stripping; it refuses files under node_modules).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type FunctionRegistration, isFunctionRegistration } from '@gatehouse/functions';
import type { FunctionRegistry } from './function-registry.ts';
import { installFunctionsResolveHook } from './functions-resolve-hook.ts';
import type { ProblemReport } from '../config/index.ts';

const moduleExtensions = new Set(['.ts', '.mts', '.js', '.mjs']);

export async function loadFunctions(
  folders: readonly string[],
  registry: FunctionRegistry,
  report: ProblemReport,
): Promise<string[]> {
  installFunctionsResolveHook();
  const loaded: string[] = [];
  for (const folder of folders) {
    if (!existsSync(folder) || !statSync(folder).isDirectory()) {
      report.warn(`Functions folder ${folder} not found`);
      continue;
    }
    for (const file of moduleFiles(folder)) {
      const registrations = await importRegistrations(file, report);
      for (const r of registrations) {
        if (registry.register(r, file)) loaded.push(r.route);
        else
          report.error(
            `Function ${r.route} in ${file} ignored - route already taken by ${registry.sourceOf(r.route)}`,
          );
      }
    }
  }
  return loaded;
}

function moduleFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true })
    .filter(
      (d) => d.isFile() && moduleExtensions.has(extname(d.name)) && !/\.(d|test)\.[mc]?[tj]s$/.test(d.name),
    )
    .map((d) => join(folder, d.name))
    .sort();
}

async function importRegistrations(file: string, report: ProblemReport): Promise<FunctionRegistration[]> {
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (err) {
    report.error(`Unable to load function module ${file} - ${(err as Error).message}`);
    return [];
  }
  const exported = [mod.default].flat();
  const registrations = exported.filter(isFunctionRegistration);
  if (registrations.length === 0 || registrations.length !== exported.length) {
    report.warn(`Module ${file} has no default export made with defineFunction - skipped`);
  }
  return registrations;
}
