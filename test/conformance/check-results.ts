/**
 * Second opinion on a conformance run, after the suite's own baseline check:
 * - every scenario Gatehouse must pass ran and every one of its checks succeeded
 *   (a WARNING counts as a failure here too, as it does in the suite's baseline logic);
 * - none of them hides in the baseline;
 * - every baseline entry names a scenario that actually ran (a typo would otherwise be ignored).
 * Prints one line per scenario. Exit 1 on any problem.
 *
 *   node --import tsx test/conformance/check-results.ts <results-dir> <expected-failures.yml> [stable|next]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The two runs of scripts/conformance.sh: the newest stable release's active suite, and the pre-release's 2026-07-28 scenarios. */
export type Step = 'stable' | 'next';

/**
 * The scenarios each run must pass, never in its baseline. Stable: every
 * active scenario that applies to Gatehouse, except resources-read-text,
 * which reads the fixture test://static-text (see the baseline). Next: the
 * 2026-07-28 scenarios that need no fixture of the reference server.
 */
export const REQUIRED: Readonly<Record<Step, readonly string[]>> = {
  stable: [
    'server-initialize',
    'ping',
    'tools-list',
    'resources-list',
    'logging-set-level',
    'dns-rebinding-protection',
  ],
  next: ['server-stateless', 'tools-list', 'resources-list', 'dns-rebinding-protection'],
};

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
  required: readonly string[] = REQUIRED.stable,
): { lines: string[]; problems: string[] } {
  const lines: string[] = [];
  const problems: string[] = [];
  for (const name of required) {
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
    const isRequired = required.includes(name);
    const expected = baseline.includes(name);
    // The suite itself already judged unlisted scenarios; this is the readable table.
    const verdict = ok
      ? expected
        ? 'STALE (passes, still in baseline)'
        : 'pass'
      : expected
        ? 'expected failure'
        : 'FAIL';
    lines.push(`${verdict.padEnd(16)}  ${isRequired ? 'required' : '        '}  ${name}`);
  }
  return { lines, problems };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [dir, baselineFile, step = 'stable'] = process.argv.slice(2);
  if (!dir || !baselineFile || (step !== 'stable' && step !== 'next')) {
    process.stderr.write('usage: check-results.ts <results-dir> <expected-failures.yml> [stable|next]\n');
    process.exit(2);
  }
  const required = REQUIRED[step];
  const { lines, problems } = evaluate(
    readResults(dir),
    baselineScenarios(readFileSync(baselineFile, 'utf8')),
    required,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
  if (problems.length > 0) {
    process.stderr.write(
      `conformance: ${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}\n`,
    );
    process.exit(1);
  }
  process.stdout.write(
    `conformance: ${step}: all ${required.length} required scenarios passed; baseline entries all ran\n`,
  );
}
