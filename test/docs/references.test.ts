import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Every file a comment or a doc names is in the repository: a newcomer who follows a reference finds it. Paths
// with a file extension are checked (a folder or an API path such as `cloud/status` is not a file reference).
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SOURCES = ['main', 'cloud', 'bridge', 'renderer', 'docs', 'scripts', 'bin', 'test', 'README.md', '.ci'];
const REFERENCE =
  /(?<![\w./-])((?:main|cloud|bridge|renderer|docs|test|scripts|bin|policy|assets|\.ci)\/[A-Za-z0-9_./-]*\.(?:ts|tsx|mjs|cjs|js|md|sh|json|cedar|yml|css|html))(?![\w/-])/g;

function references(): Array<{ file: string; path: string }> {
  const files = execFileSync('git', ['ls-files', ...SOURCES], { cwd: ROOT, encoding: 'utf8' }).split('\n');
  const found: Array<{ file: string; path: string }> = [];
  for (const file of files) {
    if (!/\.(ts|tsx|mjs|cjs|js|md|sh)$|^\.ci\/run$/.test(file) || file.startsWith('test/fixtures/')) continue;
    let text = readFileSync(join(ROOT, file), 'utf8');
    // In tests only their comments refer: a path in a test's code is data (a URL, a fixture's own name).
    if (file.startsWith('test/'))
      text = text
        .split('\n')
        .filter((l) => /^\s*(\/\/|\*|\/\*)/.test(l))
        .join('\n');
    for (const m of text.matchAll(REFERENCE)) found.push({ file, path: m[1]! });
  }
  return found;
}

describe('references to files of the repository', () => {
  it('each resolves to a file that exists', () => {
    const all = references();
    expect(all.length).toBeGreaterThan(500);
    const missing = all.filter(({ path }) => !existsSync(join(ROOT, path)));
    expect(missing).toEqual([]);
  });
});
