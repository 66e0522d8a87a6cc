import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BUNDLE, buildBridge } from '../../../bridge/build.ts';
import { CLI_BUNDLE, buildCli } from '../../../main/cli/build.ts';

/**
 * Tests run the real bins, which prefer the bundles: (re)build one when it is
 * missing or older than its sources, so no test ever runs stale code. A lock
 * directory keeps parallel test files from building at the same time.
 */

export const ROOT = resolve(import.meta.dirname, '../../..');
export const BIN = join(ROOT, 'bin', 'gatehouse-bridge.mjs');

interface Bundle {
  output: string;
  lock: string;
  sources: string[];
  build: () => Promise<void>;
}

const BRIDGE: Bundle = {
  output: BUNDLE,
  lock: join(ROOT, 'dist', '.bridge-build.lock'),
  sources: [
    join(ROOT, 'bridge'),
    join(ROOT, 'main', 'contract'),
    join(ROOT, 'main', 'lib'),
    join(ROOT, 'main', 'store'),
  ],
  build: buildBridge,
};
const CLI: Bundle = {
  output: CLI_BUNDLE,
  lock: join(ROOT, 'dist', '.cli-build.lock'),
  sources: [join(ROOT, 'main'), join(ROOT, 'bridge', 'build.ts')],
  build: buildCli,
};

function newestSource(sources: string[]): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  for (const d of sources) {
    if (d.endsWith('.ts')) newest = Math.max(newest, statSync(d).mtimeMs);
    else walk(d);
  }
  return newest;
}

function bundleTime(output: string): number {
  try {
    return statSync(output).mtimeMs;
  } catch {
    return 0;
  }
}

export const ensureBundle = (): Promise<void> => ensureFresh(BRIDGE);
export const ensureCliBundle = (): Promise<void> => ensureFresh(CLI);

async function ensureFresh(b: Bundle): Promise<void> {
  for (let waited = 0; bundleTime(b.output) < newestSource(b.sources); waited += 200) {
    try {
      mkdirSync(join(ROOT, 'dist'), { recursive: true });
      mkdirSync(b.lock);
    } catch {
      // Someone else is building; a lock older than a minute is left over from a crash.
      const lock = statSync(b.lock, { throwIfNoEntry: false });
      if (lock && Date.now() - lock.mtimeMs > 60_000) rmSync(b.lock, { recursive: true, force: true });
      if (waited > 60_000) throw new Error(`timed out waiting for another build of ${b.output}`);
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    try {
      if (bundleTime(b.output) < newestSource(b.sources)) await b.build();
    } finally {
      rmSync(b.lock, { recursive: true, force: true });
    }
  }
}
