import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { isPidAlive } from '../../main/store/pid-alive.ts';

// A TypeScript script a test runs as its own process, bundled once per test process (its packages left to
// node_modules) and then run by plain Node: under tsx every start loaded the TypeScript loader first (0.3-0.5 s of CPU
// each, 2 s for the cloud gateway; the suite starts about fifty).
const bundles = new Map<string, string>();
let outDir: string | undefined;

/** The path of `script` (absolute, .ts) bundled into one ES module that plain `node` runs. */
export function bundledScript(script: string): string {
  const known = bundles.get(script);
  if (known) return known;
  if (!outDir) {
    // Inside node_modules/.cache, so that the packages left out resolve from the checkout's node_modules; one folder
    // per test process, and those of processes that are gone (a worker is killed, not exited) removed here.
    const cache = fileURLToPath(new URL('../../node_modules/.cache/gatehouse-scripts/', import.meta.url));
    mkdirSync(cache, { recursive: true });
    for (const pid of readdirSync(cache))
      if (!isPidAlive(Number(pid))) rmSync(join(cache, pid), { recursive: true, force: true });
    outDir = join(cache, String(process.pid));
    mkdirSync(outDir, { recursive: true });
  }
  const outfile = join(outDir, `${bundles.size}-${basename(script).replace(/\.ts$/, '.mjs')}`);
  buildSync({
    entryPoints: [script],
    outfile,
    bundle: true,
    packages: 'external',
    format: 'esm',
    platform: 'node',
    logLevel: 'error',
  });
  bundles.set(script, outfile);
  return outfile;
}
