import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { buildSwapped, common, REQUIRE_BANNER } from '../../bridge/build.ts';
import { UpstreamsData } from '../plugins/upstream/upstream-data.ts';
import { schemaFingerprint } from '../store/trusted-digest.ts';

/**
 * Builds the `gatehouse` command for fast start-up (`npm run build:cli`):
 *
 *   dist/cli/gatehouse.mjs   the entry: argument routing, usage, errors
 *   dist/cli/chunks/*.mjs    each command's code, imported when that command runs
 *   dist/cli/remote.cjs      the commands a running service answers, in one CommonJS file, which
 *                            bin/gatehouse.cjs runs first (main/cli/remote-main.ts)
 *
 * Running TypeScript through tsx costs ~0.6 s per command and ~40 MB of the
 * service's memory; one bundle split at the commands' dynamic imports loads
 * only what a command uses. bin/gatehouse.cjs falls back to tsx without it.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI_BUNDLE = join(root, 'dist', 'cli', 'gatehouse.mjs');

export const REMOTE_BUNDLE = join(dirname(CLI_BUNDLE), 'remote.cjs');

const CUTS = join(root, 'main', 'cli', 'remote-cuts.ts');
const CUT_AWAY = [join(root, 'main', 'cli', 'direct-connection.ts'), join(root, 'main', 'contract', 'action-http.ts')];

/** In remote.cjs, the two modules that would bring in the rest of Gatehouse are main/cli/remote-cuts.ts. */
const remoteCuts: Plugin = {
  name: 'remote-cuts',
  setup(b) {
    b.onResolve({ filter: /\/(direct-connection|action-http)\.ts$/ }, (args) =>
      CUT_AWAY.includes(resolve(args.resolveDir, args.path)) ? { path: CUTS } : undefined,
    );
  },
};

/**
 * The stores' schemas the bundle knows the fingerprints of (main/store/trusted-digest.ts), by the name the store
 * passes as `fingerprintName`: computed here with the same zod, so a trusted open reads none of the schema.
 */
export function builtFingerprints(): Record<string, string> {
  const upstreams = schemaFingerprint(UpstreamsData);
  return upstreams === null ? {} : { upstreams };
}

export async function buildCli(): Promise<void> {
  await buildSwapped(dirname(CLI_BUNDLE), (tmp) =>
    Promise.all([
      build({
        ...common,
        banner: REQUIRE_BANNER,
        entryPoints: { gatehouse: join(root, 'main', 'cli.ts') },
        outdir: tmp,
        outExtension: { '.js': '.mjs' },
        splitting: true,
        chunkNames: 'chunks/[name]-[hash]',
        // A string, not an object: esbuild injects an object-valued define as a module every module initialises.
        define: {
          ...common.define,
          __GATEHOUSE_SCHEMA_FINGERPRINTS__: JSON.stringify(JSON.stringify(builtFingerprints())),
        },
        // The Cedar engine's CommonJS loader finds its .wasm beside itself (__dirname): it must load from node_modules, not the bundle.
        external: [...(common.external ?? []), '@cedar-policy/cedar-wasm', '@cedar-policy/cedar-wasm/nodejs'],
      }),
      build({
        ...common,
        format: 'cjs',
        entryPoints: [join(root, 'main', 'cli', 'remote-main.ts')],
        outfile: join(tmp, basename(REMOTE_BUNDLE)),
        // The one module on this path that finds itself by its URL (main/package-root.ts).
        define: { ...common.define, 'import.meta.url': '__remoteFileUrl' },
        banner: { js: "var __remoteFileUrl = require('node:url').pathToFileURL(__filename).href;" },
        plugins: [remoteCuts, ...(common.plugins ?? [])],
      }),
    ]),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildCli();
  process.stdout.write(`built ${CLI_BUNDLE}\n`);
}
