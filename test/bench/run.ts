/**
 * `npm run bench`: every benchmark in test/bench, one after another, each
 * printing its own side-by-side table. Speed targets live here, never in tests.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const only = process.argv.slice(2);
const benches = readdirSync(dir).filter(
  (f) => f.endsWith('-bench.ts') && (only.length === 0 || only.some((o) => f.includes(o))),
);
let failed = 0;
for (const file of benches) {
  console.log(`\n=== ${file} ===`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', `${dir}${file}`], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
