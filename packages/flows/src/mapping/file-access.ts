/**
 * Where `file(...)` and `classpath(...)` may go. Their path can be built from request data
 * (`{model.x}` substitution), so it is used only when its real path lies in an allowed folder:
 * one of `fileFolders` (flow.file.folders) for `file(...)`, the resource folder for
 * `classpath(...)`, with `..` and symbolic links resolved as static content resolves them. Anything
 * else aborts the flow: 400 when request data built the path, 500 when the flow file wrote it so.
 */
import { AppException } from '@gatehouse/functions';
import { realPathInside } from '@gatehouse/service-kit';
import { join } from 'node:path';
import type { MappingHooks } from './mapping-hooks.ts';

/** The real path a `file(...)` path may be read or written at. */
export function filePath(path: string, hooks: MappingHooks | undefined, built: boolean): string {
  for (const folder of hooks?.fileFolders ?? []) {
    const real = realPathInside(folder, path);
    if (real !== undefined) return real;
  }
  throw new AppException(built ? 400 : 500, `File path ${path} is outside flow.file.folders`);
}

/** The real path of a `classpath(...)` resource. */
export function resourcePath(path: string, hooks: MappingHooks | undefined, built: boolean): string {
  const folder = hooks?.resourceFolder ?? process.cwd();
  const real = realPathInside(folder, join(folder, path));
  if (real !== undefined) return real;
  throw new AppException(built ? 400 : 500, `Resource path ${path} is outside the resource folder`);
}
