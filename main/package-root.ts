import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package's root folder, found by walking up from this file, so paths
 * resolve the same from the TypeScript sources (main/) and from the compiled
 * output (dist/main/).
 */
function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'gatehouse')
      return dir;
    dir = dirname(dir);
  }
  throw new Error('gatehouse: cannot find the package root (package.json) above main/');
}

let found: string | undefined;

/** Found at the first call: a bundle that needs only the version (bridge/build.ts writes it in) never walks the folders. */
export const packageRoot = (): string => (found ??= findRoot());

export const PACKAGE_ROOT = /* @__PURE__ */ packageRoot();
