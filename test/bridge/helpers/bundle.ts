import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BUNDLE, buildBridge } from '../../../bridge/build.ts';

/**
 * Tests run the real bin, which prefers the bundle: (re)build it when it is
 * missing or older than the sources, so no test ever runs stale code. A lock
 * directory keeps parallel test files from building at the same time.
 */

export const ROOT = resolve(import.meta.dirname, '../../..');
export const BIN = join(ROOT, 'bin', 'gatehouse-bridge.mjs');
const LOCK = join(ROOT, 'dist', '.bridge-build.lock');
const SOURCES = [join(ROOT, 'bridge'), join(ROOT, 'main', 'contract'), join(ROOT, 'main', 'store')];

function newestSource(): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  for (const d of SOURCES) walk(d);
  return newest;
}

function bundleTime(): number {
  try {
    return statSync(BUNDLE).mtimeMs;
  } catch {
    return 0;
  }
}

export async function ensureBundle(): Promise<void> {
  for (let waited = 0; bundleTime() < newestSource(); waited += 200) {
    try {
      mkdirSync(join(ROOT, 'dist'), { recursive: true });
      mkdirSync(LOCK);
    } catch {
      // Someone else is building; a lock older than a minute is left over from a crash.
      const lock = statSync(LOCK, { throwIfNoEntry: false });
      if (lock && Date.now() - lock.mtimeMs > 60_000) rmSync(LOCK, { recursive: true, force: true });
      if (waited > 60_000) throw new Error('timed out waiting for another bridge build');
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    try {
      if (bundleTime() < newestSource()) await buildBridge();
    } finally {
      rmSync(LOCK, { recursive: true, force: true });
    }
  }
}
