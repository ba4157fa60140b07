/**
 * The production build: every workspace package's `src/` compiled by esbuild into a `dist/` beside
 * it, one .js file (and its source map) per .ts file, other files in src/ copied. Running the
 * built JavaScript spares a process Node's type stripper (a WebAssembly compiler held for the life
 * of the process) and the per-file stripping at start. Tests keep running the TypeScript sources.
 *
 * Layout is kept file for file so that `new URL('./x.json', import.meta.url)` still finds its file
 * and each package's dependencies still resolve from its own node_modules (pnpm's layout). Imports
 * of `./x.ts` become `./x.js`; imports of a workspace package (`@gatehouse/bus`) become a relative
 * path to that package's built entry, so the built files never load a TypeScript source.
 * `node tools/build.ts` builds everything; run the result with `node --enable-source-maps
 * services/<name>/dist/main.js` so stack traces name the .ts lines. `ensureBuilt()` builds only what
 * is missing or older than its sources (what a benchmark calls before it starts built JavaScript).
 *
 * The example REST app (examples/rest-app, the built engine's default config folder) is built too,
 * into examples/rest-app/dist/: its files copied, its TypeScript functions compiled one for one, so
 * the built REST engine and embedded runner never load the type stripper for them.
 *
 * Usage: node tools/build.ts [--stale]
 *   --stale    build only the packages (and the example app) whose dist/ is missing a file or has one
 *              older than its source, as `ensureBuilt()` does; default: everything
 *   --help, -h print this and exit
 */
import { cp, readdir, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { headerUsage } from './header-usage.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The workspace packages that run in production (testkit and client are not among them). */
export async function buildablePackages(): Promise<string[]> {
  const found: string[] = [join(root, 'embedded')];
  for (const group of ['packages', 'services']) {
    for (const name of await readdir(join(root, group))) {
      if (name === 'testkit' || name === 'client') continue;
      found.push(join(root, group, name));
    }
  }
  return found;
}

/** The built twin of a source file: `<pkg>/src/a/b.ts` → `<pkg>/dist/a/b.js`. */
function builtPath(sourcePath: string): string {
  return sourcePath.replace(`${sep}src${sep}`, `${sep}dist${sep}`).replace(/\.ts$/, '.js');
}

function relativeSpecifier(fromFile: string, toFile: string): string {
  const path = relative(dirname(fromFile), toFile).split(sep).join('/');
  return path.startsWith('.') ? path : `./${path}`;
}

/** Marks esbuild's own resolution of a workspace package, which must not come back to this plugin. */
const resolving = Symbol('resolving');

/** Leaves every import to Node, rewritten to name built files instead of TypeScript sources. */
const builtImports: Plugin = {
  name: 'built-imports',
  setup(esbuild) {
    esbuild.onResolve({ filter: /.*/ }, async (args) => {
      if (args.kind === 'entry-point' || args.pluginData === resolving) return undefined;
      if (args.path.startsWith('.')) {
        return { path: args.path.replace(/\.ts$/, '.js'), external: true };
      }
      if (args.path.startsWith('@gatehouse/')) {
        const target = await esbuild.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          pluginData: resolving,
        });
        if (target.errors.length > 0) return { errors: target.errors };
        return { path: relativeSpecifier(builtPath(args.importer), builtPath(target.path)), external: true };
      }
      return { path: args.path, external: true };
    });
  },
};

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/** Builds one package's src/ into its dist/ (emptied first). */
export async function buildPackage(pkg: string): Promise<void> {
  const src = join(pkg, 'src');
  const dist = join(pkg, 'dist');
  await rm(dist, { recursive: true, force: true });
  const files = await sourceFiles(src);
  await build({
    entryPoints: files.filter((f) => f.endsWith('.ts')),
    outbase: src,
    outdir: dist,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    sourcemap: 'linked',
    sourcesContent: false,
    plugins: [builtImports],
    logLevel: 'warning',
  });
  for (const asset of files.filter((f) => !f.endsWith('.ts'))) {
    await cp(asset, join(dist, relative(src, asset)));
  }
}

/** The example REST app the built engine runs by default (rest-settings.ts, defaultConfigFolder). */
export const exampleRestApp = join(root, 'examples', 'rest-app');

/**
 * Builds a REST app folder into its dist/: every file copied but the TypeScript of `functions/`,
 * which is compiled (imports untouched: the engine resolves `@gatehouse/functions` itself).
 */
export async function buildRestApp(app: string): Promise<void> {
  const dist = join(app, 'dist');
  await rm(dist, { recursive: true, force: true });
  const files = (await sourceFiles(app)).filter(
    (f) => !f.startsWith(`${dist}${sep}`) && !f.endsWith('tsconfig.json'),
  );
  const functions = files.filter((f) => f.startsWith(join(app, 'functions', '')) && f.endsWith('.ts'));
  await build({
    entryPoints: functions,
    outbase: app,
    outdir: dist,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'warning',
  });
  for (const file of files.filter((f) => !functions.includes(f))) {
    await cp(file, join(dist, relative(app, file)));
  }
}

/** Everything the image runs: every package's dist/ and the example REST app's. */
export async function buildAll(): Promise<void> {
  for (const pkg of await buildablePackages()) await buildPackage(pkg);
  await buildRestApp(exampleRestApp);
}

/** The files a build compiles or copies, each with the file it writes. */
type BuildPlan = Array<{ source: string; output: string }>;

async function packagePlan(pkg: string): Promise<BuildPlan> {
  const src = join(pkg, 'src');
  return (await sourceFiles(src)).map((source) => ({
    source,
    output: join(pkg, 'dist', relative(src, source)).replace(/\.ts$/, '.js'),
  }));
}

async function restAppPlan(app: string): Promise<BuildPlan> {
  const dist = join(app, 'dist');
  const functions = join(app, 'functions', '');
  return (await sourceFiles(app))
    .filter((f) => !f.startsWith(`${dist}${sep}`) && !f.endsWith('tsconfig.json'))
    .map((source) => {
      const output = join(dist, relative(app, source));
      return { source, output: source.startsWith(functions) ? output.replace(/\.ts$/, '.js') : output };
    });
}

/** Why a build's output no longer matches its sources (the first difference found), or undefined. */
async function staleness(folder: string, plan: BuildPlan): Promise<string | undefined> {
  for (const { source, output } of plan) {
    const built = await stat(output).catch(() => undefined);
    if (!built) return `${relative(folder, output)} is missing`;
    if ((await stat(source)).mtimeMs > built.mtimeMs)
      return `${relative(folder, source)} is newer than its build`;
  }
  return undefined;
}

/**
 * Builds what is missing or older than its sources: each package (default: every buildable one) and
 * REST app (default: the example app) whose dist/ lacks the build of a source file, or holds one older
 * than the file. Says on stderr what it builds and why; resolves with the folders it built.
 */
export async function ensureBuilt(
  options: { packages?: string[]; restApps?: string[]; log?: (line: string) => void } = {},
): Promise<string[]> {
  const log = options.log ?? ((line: string) => console.error(line));
  const builds = [
    ...(options.packages ?? (await buildablePackages())).map((dir) => ({
      dir,
      plan: packagePlan,
      build: buildPackage,
    })),
    ...(options.restApps ?? [exampleRestApp]).map((dir) => ({ dir, plan: restAppPlan, build: buildRestApp })),
  ];
  const built: string[] = [];
  for (const { dir, plan, build } of builds) {
    const why = await staleness(dir, await plan(dir));
    if (why === undefined) continue;
    const name = relative(root, dir).startsWith('..') ? dir : relative(root, dir);
    log(`build: ${name}: ${why}; building it (tools/build.ts)`);
    await build(dir);
    built.push(dir);
  }
  return built;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(headerUsage(import.meta.url));
  } else if (args.includes('--stale')) await ensureBuilt();
  else await buildAll();
}
