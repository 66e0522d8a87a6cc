import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildSwapped, common, REQUIRE_BANNER } from '../../bridge/build.ts';

/**
 * Builds the `gatehouse` command for fast start-up (`npm run build:cli`):
 *
 *   dist/cli/gatehouse.mjs   the entry: argument routing, usage, errors
 *   dist/cli/chunks/*.mjs    each command's code, imported when that command runs
 *
 * Running TypeScript through tsx costs ~0.6 s per command and ~40 MB of the
 * service's memory; one bundle split at the commands' dynamic imports loads
 * only what a command uses. bin/gatehouse.cjs falls back to tsx without it.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI_BUNDLE = join(root, 'dist', 'cli', 'gatehouse.mjs');

export async function buildCli(): Promise<void> {
  await buildSwapped(dirname(CLI_BUNDLE), (tmp) =>
    build({
      ...common,
      banner: REQUIRE_BANNER,
      entryPoints: { gatehouse: join(root, 'main', 'cli.ts') },
      outdir: tmp,
      outExtension: { '.js': '.mjs' },
      splitting: true,
      chunkNames: 'chunks/[name]-[hash]',
      // The Cedar engine's CommonJS loader finds its .wasm beside itself (__dirname): it must load from node_modules, not the bundle.
      external: [...(common.external ?? []), '@cedar-policy/cedar-wasm', '@cedar-policy/cedar-wasm/nodejs'],
    }),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildCli();
  process.stdout.write(`built ${CLI_BUNDLE}\n`);
}
