import { isBuiltin } from 'node:module';
import { readFileSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions, type Plugin } from 'esbuild';

/**
 * Builds the bridge for fast start-up (`npm run build:bridge`):
 *
 *   dist/bridge/gatehouse-bridge.mjs  everything a bridging run needs, in one file
 *   dist/bridge/lazy/*.mjs            what only some runs need: the vault (keytar, zod),
 *                                     the contract's error codes (zod), the config writer
 *
 * Node spends most of a cold start loading and compiling code; one small file
 * with no zod in it is what keeps spawn-to-initialize under ~120 ms.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGE_VERSION = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
export const BUNDLE = join(root, 'dist', 'bridge', 'gatehouse-bridge.mjs');

// Imported dynamically by the bridge; built separately so the main file does not carry them.
const LAZY: Record<string, string> = {
  config: join(root, 'bridge', 'config', 'command.ts'),
  vault: join(root, 'main', 'store', 'vault.ts'),
  errors: join(root, 'main', 'contract', 'errors.ts'),
};

const lazyExternal: Plugin = {
  name: 'lazy-external',
  setup(b) {
    b.onResolve({ filter: /\.ts$/ }, (args) => {
      if (args.kind !== 'dynamic-import') return undefined;
      const abs = resolve(args.resolveDir, args.path);
      const name = Object.entries(LAZY).find(([, file]) => file === abs)?.[0];
      return name ? { path: `./lazy/${name}.mjs`, external: true } : undefined;
    });
  },
};

/**
 * zod's `z` namespace re-exports all of its ~60 message locales, which a
 * bundler cannot drop (the namespace object holds them): half of zod's bytes,
 * parsed on every start. Gatehouse uses only the default, English.
 */
export const zodEnglishOnly: Plugin = {
  name: 'zod-english-only',
  setup(b) {
    b.onLoad({ filter: /zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
      contents: 'export { default as en } from "./en.js";',
      loader: 'js',
    }));
  },
};

/**
 * Node's built-in modules taken with require(), not `import`, and each only at the first use of one of its exports.
 * An ESM import of a built-in builds its module facade by reading every export, and that runs the lazy getters:
 * `node:http`'s load all of undici (~80 ms of every start, for `WebSocket` and friends nothing here uses), `node:fs`'s
 * its streams. And esbuild's interop copies a required module's properties onto an object of its own, reading each
 * one's descriptor, which on `node:util` loads `worker_threads` and the diff machinery (~3 ms of every start); a
 * module imported only for a write (`node:crypto`, ~4 ms to load, for a temporary file's name) was loaded by commands
 * that write nothing. So each built-in is a stand-in that requires the real module when one of its exports is first
 * read (docs/performance.md, "Start-up").
 */
export const builtinsByRequire: Plugin = {
  name: 'builtins-by-require',
  setup(b) {
    b.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) => {
      if (args.namespace === 'builtin-by-require' || !isBuiltin(args.path)) return undefined;
      return { path: args.path, namespace: 'builtin-by-require' };
    });
    b.onLoad({ filter: /.*/, namespace: 'builtin-by-require' }, (args) => ({
      contents: lazyBuiltin(args.path),
      loader: 'js',
    }));
  },
};

/**
 * CommonJS source for a stand-in of built-in `id`. Its prototype is a proxy that looks every name up on the real
 * module, loaded at the first lookup: the stand-in has no own properties, so esbuild's interop, which copies a
 * module's own properties once for every module that imports it, has nothing to copy, and there is no list of
 * names to fall out of step with the Node that runs the bundle. A built-in that is not a plain namespace is
 * required as it is: one that is itself a function (`node:events`' EventEmitter, `node:assert`, `node:stream`'s
 * Stream) is called or extended as the default import, and `node:process` is an EventEmitter whose methods need
 * `this` to be it.
 */
function lazyBuiltin(id: string): string {
  const real: unknown = process.getBuiltinModule(id);
  const plain = typeof real === 'object' && real !== null && Object.getPrototypeOf(real) === Object.prototype;
  if (!plain) return `module.exports = require(${JSON.stringify(id)});`;
  return [
    `let real;`,
    `const load = () => (real ??= require(${JSON.stringify(id)}));`,
    `module.exports = Object.create(new Proxy({}, { get: (_, name) => load()[name], has: (_, name) => name in load() }));`,
  ].join('\n');
}

// Bundled CommonJS code may call require(); ESM has none unless we make one.
export const REQUIRE_BANNER = {
  js: "import { createRequire as __bridgeCreateRequire } from 'node:module'; const require = __bridgeCreateRequire(import.meta.url);",
};

export const common: BuildOptions = {
  bundle: true,
  // main/version.ts: the version is known at build time, so no bundle reads package.json for it at every start.
  define: { __GATEHOUSE_VERSION__: JSON.stringify(PACKAGE_VERSION) },
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // keytar is a native addon: it is resolved from node_modules at run time.
  external: ['keytar'],
  // jsonc-parser's "main" is a UMD build whose internal require()s esbuild cannot follow; its "module" build is plain ESM.
  mainFields: ['module', 'main'],
  plugins: [zodEnglishOnly, builtinsByRequire],
  legalComments: 'none',
  logLevel: 'warning',
};

/** Builds into a folder beside `final` and swaps folders, so a process starting meanwhile never sees half a build. */
export async function buildSwapped(final: string, build: (tmp: string) => Promise<unknown>): Promise<void> {
  const tmp = `${final}.tmp-${process.pid}`;
  const old = `${final}.old-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  await build(tmp);
  await rename(final, old).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'ENOENT') throw e;
  });
  await rename(tmp, final);
  await rm(old, { recursive: true, force: true });
}

export async function buildBridge(): Promise<void> {
  await buildSwapped(dirname(BUNDLE), (tmp) =>
    Promise.all([
      build({
        ...common,
        banner: REQUIRE_BANNER,
        entryPoints: [join(root, 'bridge', 'entry.ts')],
        outfile: join(tmp, 'gatehouse-bridge.mjs'),
        plugins: [lazyExternal, zodEnglishOnly, builtinsByRequire],
      }),
      build({
        ...common,
        banner: REQUIRE_BANNER,
        entryPoints: LAZY,
        outdir: join(tmp, 'lazy'),
        outExtension: { '.js': '.mjs' },
        splitting: true,
        chunkNames: 'chunks/[name]-[hash]',
        plugins: [lazyExternal, zodEnglishOnly, builtinsByRequire],
      }),
    ]),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildBridge();
  process.stdout.write(`built ${BUNDLE}\n`);
}
