import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// What makes `scripts/setup.sh` quiet on a supported setup: npm 11.16+ warns about every
// installed package with install scripts that package.json's allowScripts does not name, and the Node range
// stated to people is the one package.json declares.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  allowScripts: Record<string, boolean>;
};
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { hasInstallScript?: boolean }>;
};

describe('install setup', () => {
  it('names every locked package that has install scripts in allowScripts, and nothing that is not there', () => {
    const withScripts = new Set(
      Object.entries(lock.packages)
        .filter(([, p]) => p.hasInstallScript)
        .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)),
    );
    expect([...withScripts].sort()).toEqual(Object.keys(pkg.allowScripts).sort());
  });

  it('states the supported Node versions the same in package.json, the README and setup.sh', () => {
    expect(pkg.engines.node).toBe('>=22.12.0');
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('Node.js 22.12+');
    expect(readFileSync(join(ROOT, 'scripts', 'setup.sh'), 'utf8')).toContain('needs Node.js 22.12+');
  });
});
