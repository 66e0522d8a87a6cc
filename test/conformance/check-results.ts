/**
 * Second opinion on a conformance run, after the suite's own baseline check:
 * - every scenario Gatehouse must pass ran and every one of its checks succeeded
 *   (a WARNING counts as a failure here too, as it does in the suite's baseline logic);
 * - none of them hides in the baseline;
 * - every baseline entry names a scenario that actually ran (a typo would otherwise be ignored).
 * Prints one line per scenario. Exit 1 on any problem.
 *
 *   node --import tsx test/conformance/check-results.ts <results-dir> <expected-failures.yml>
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Every active scenario that applies to Gatehouse: the ones issue 3 names, except
 * resources-read-text, which reads the fixture test://static-text (see the baseline).
 */
export const REQUIRED = [
  'server-initialize',
  'ping',
  'tools-list',
  'resources-list',
  'logging-set-level',
  'dns-rebinding-protection',
] as const;

type Check = { id: string; status: string; errorMessage?: string };

/** Scenario names from our baseline file: `  - name  # reason` lines under `server:`. */
export function baselineScenarios(yaml: string): string[] {
  const out: string[] = [];
  let inServer = false;
  for (const line of yaml.split('\n')) {
    if (/^\S/.test(line) && !line.startsWith('#')) inServer = /^server:\s*(#.*)?$/.test(line);
    const m = inServer ? /^\s+-\s+([\w./-]+)\s*(#.*)?$/.exec(line) : null;
    if (m?.[1]) out.push(m[1]);
  }
  return out;
}

/** Results are saved as `server-<scenario>-<ISO time>/checks.json`. */
export function readResults(dir: string): Map<string, Check[]> {
  const results = new Map<string, Check[]>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const m = entry.isDirectory() ? /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(entry.name) : null;
    if (!m?.[1]) continue;
    results.set(m[1], JSON.parse(readFileSync(join(dir, entry.name, 'checks.json'), 'utf8')) as Check[]);
  }
  return results;
}

export function evaluate(
  results: Map<string, Check[]>,
  baseline: readonly string[],
): { lines: string[]; problems: string[] } {
  const lines: string[] = [];
  const problems: string[] = [];
  for (const name of REQUIRED) {
    if (baseline.includes(name)) problems.push(`${name} is required to pass but is listed in the baseline`);
    const checks = results.get(name);
    if (!checks) {
      problems.push(`${name} is required but did not run`);
      continue;
    }
    const bad = checks.filter((c) => c.status !== 'SUCCESS');
    if (checks.length === 0) problems.push(`${name} ran no checks`);
    for (const c of bad) problems.push(`${name}: ${c.id} ${c.status}${c.errorMessage ? `: ${c.errorMessage}` : ''}`);
  }
  for (const name of baseline)
    if (!results.has(name)) problems.push(`baseline entry ${name} names no scenario that ran`);
  for (const [name, checks] of [...results].sort(([a], [b]) => a.localeCompare(b))) {
    const ok = checks.length > 0 && checks.every((c) => c.status === 'SUCCESS');
    const required = REQUIRED.includes(name as (typeof REQUIRED)[number]);
    const expected = baseline.includes(name);
    // The suite itself already judged unlisted scenarios; this is the readable table.
    const verdict = ok
      ? expected
        ? 'STALE (passes, still in baseline)'
        : 'pass'
      : expected
        ? 'expected failure'
        : 'FAIL';
    lines.push(`${verdict.padEnd(16)}  ${required ? 'required' : '        '}  ${name}`);
  }
  return { lines, problems };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [dir, baselineFile] = process.argv.slice(2);
  if (!dir || !baselineFile) {
    process.stderr.write('usage: check-results.ts <results-dir> <expected-failures.yml>\n');
    process.exit(2);
  }
  const { lines, problems } = evaluate(readResults(dir), baselineScenarios(readFileSync(baselineFile, 'utf8')));
  process.stdout.write(`${lines.join('\n')}\n`);
  if (problems.length > 0) {
    process.stderr.write(
      `conformance: ${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}\n`,
    );
    process.exit(1);
  }
  process.stdout.write(`conformance: all ${REQUIRED.length} required scenarios passed; baseline entries all ran\n`);
}
