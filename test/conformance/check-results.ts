/**
 * Second opinion on a conformance run, after the suite's own baseline check:
 * - every scenario Gatehouse must pass ran, had a check that succeeded, and
 *   failed none (a WARNING counts as a failure, as it does in the suite's
 *   baseline logic), except checks its baseline names one by one;
 * - none of them is in the baseline as a whole;
 * - every baseline entry names a scenario that ran, and a check entry a
 *   check that still fails (a typo or a fixed check would otherwise be ignored).
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
 * The scenarios each run must pass. Stable: every scenario (active and
 * pending) that applies to Gatehouse, except resources-read-text, which
 * reads the fixture test://static-text (see the baseline). Next: the 2026-07-28 scenarios that
 * need no fixture of the reference server, and server-stateless, whose
 * fixture-bound checks its baseline lists one by one.
 */
export const REQUIRED: Readonly<Record<Step, readonly string[]>> = {
  stable: [
    'server-initialize',
    'ping',
    'tools-list',
    'resources-list',
    'prompts-list',
    'logging-set-level',
    'dns-rebinding-protection',
  ],
  next: [
    'server-stateless',
    'tools-list',
    'resources-list',
    'prompts-list',
    'sep-2164-resource-not-found',
    'dns-rebinding-protection',
    'caching',
    'http-header-validation',
    'input-required-result-unsupported-methods',
    'input-required-result-validate-input',
  ],
};

type Check = { id: string; status: string; errorMessage?: string };
/** `scenario` (the whole scenario fails) or `scenario:check-id` (that one check fails). */
export type Entry = { scenario: string; check?: string };

/** What the suite's baseline logic counts as failed. */
const failing = (c: Check) => c.status === 'FAILURE' || c.status === 'WARNING';

/** Entries from our baseline file: `  - name  # reason` or `  - name:check-id  # reason` lines under `server:`. */
export function baselineEntries(yaml: string): Entry[] {
  const out: Entry[] = [];
  let inServer = false;
  for (const line of yaml.split('\n')) {
    if (/^\S/.test(line) && !line.startsWith('#')) inServer = /^server:\s*(#.*)?$/.test(line);
    const m = inServer ? /^\s+-\s+([\w./-]+)(?::([\w./-]+))?\s*(#.*)?$/.exec(line) : null;
    if (m?.[1]) out.push(m[2] ? { scenario: m[1], check: m[2] } : { scenario: m[1] });
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
  baseline: readonly Entry[],
  required: readonly string[] = REQUIRED.stable,
): { lines: string[]; problems: string[] } {
  const lines: string[] = [];
  const problems: string[] = [];
  const whole = new Set(baseline.filter((e) => !e.check).map((e) => e.scenario));
  const listedChecks = (name: string) =>
    new Set(baseline.filter((e) => e.scenario === name && e.check).map((e) => e.check!));
  for (const name of required) {
    if (whole.has(name)) problems.push(`${name} is required to pass but is listed in the baseline as a whole`);
    const checks = results.get(name);
    if (!checks) {
      problems.push(`${name} is required but did not run`);
      continue;
    }
    if (!checks.some((c) => c.status === 'SUCCESS')) problems.push(`${name} had no check that succeeded`);
    const allowed = listedChecks(name);
    for (const c of checks.filter((x) => failing(x) && !allowed.has(x.id)))
      problems.push(`${name}: ${c.id} ${c.status}${c.errorMessage ? `: ${c.errorMessage}` : ''}`);
  }
  for (const e of baseline) {
    const checks = results.get(e.scenario);
    if (!checks) problems.push(`baseline entry ${e.scenario} names no scenario that ran`);
    else if (e.check && !checks.some((c) => c.id === e.check && failing(c)))
      problems.push(`baseline entry ${e.scenario}:${e.check} names no failing check (fixed? remove it)`);
  }
  for (const [name, checks] of [...results].sort(([a], [b]) => a.localeCompare(b))) {
    const allowed = listedChecks(name);
    const bad = checks.filter(failing);
    const ok = bad.length === 0;
    const isRequired = required.includes(name);
    // The suite itself already judged unlisted scenarios; this is the readable table.
    const verdict = whole.has(name)
      ? ok
        ? 'STALE (passes, still in baseline)'
        : 'expected failure'
      : ok
        ? checks.some((c) => c.status === 'SUCCESS')
          ? 'pass'
          : 'no checks ran'
        : bad.every((c) => allowed.has(c.id))
          ? `pass, ${bad.length} listed check(s) fail`
          : 'FAIL';
    lines.push(`${verdict.padEnd(28)}  ${isRequired ? 'required' : '        '}  ${name}`);
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
  const { lines, problems } = evaluate(readResults(dir), baselineEntries(readFileSync(baselineFile, 'utf8')), required);
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
