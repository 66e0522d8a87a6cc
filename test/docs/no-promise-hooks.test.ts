import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

// On Node 22 (the floor), the first AsyncLocalStorage.run() or async hook turns on promise hooks for the whole
// process, and from then on every promise pays for them: 11-15% of a test worker's CPU, and the service's the same.
// The store's nested-update guard and the listen streams' owners do without (main/store/json-file-store.ts,
// main/mcp/list-changed.ts); this keeps it so for every file that ships.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const shipped = execFileSync('git', ['ls-files', 'main', 'cloud', 'bridge'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((f) => /\.(ts|tsx|mjs|cjs|js)$/.test(f));

it('no shipped file uses AsyncLocalStorage, async hooks or AsyncResource', () => {
  expect(shipped.length).toBeGreaterThan(100);
  const using = shipped.filter((f) =>
    /\b(AsyncLocalStorage|createHook|AsyncResource|executionAsyncResource)\b|['"](node:)?async_hooks['"]/.test(
      readFileSync(join(ROOT, f), 'utf8').replace(/^\s*(\/\/|\*).*$/gm, ''),
    ),
  );
  expect(using).toEqual([]);
});
