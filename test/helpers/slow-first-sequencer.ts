import { readFileSync } from 'node:fs';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The order files are handed to the workers (vitest.config.ts):
 * - the files that take longest (measured on a quiet 2-core machine) first, so that none of them starts near
 *   the end of a run and keeps one worker busy after the other has run out of files. Vitest orders by the
 *   durations of the previous run when it has them, by file size otherwise: a fresh clone (CI) has none, and
 *   these files are short;
 * - then the Node files, then the jsdom ones (`@vitest-environment jsdom`): a worker goes on to the next
 *   file in the same process only when its environment is the same, so mixing them starts a process at
 *   each change.
 * Order only: no test depends on it.
 */
// From the longest down, as measured in one run of the whole suite (2026-12-02, a busy 2-core machine) after the
// CLI tests ran their commands in process (cli-harness.ts, runCliHere).
const SLOW_FIRST = [
  'test/crash/staging-crash.test.ts',
  'test/docs/commands.test.ts',
  'test/plugins/upstream/upstream-stop.test.ts',
  'test/wire/cloud-cli.test.ts',
  'test/store/process-lock.test.ts',
  'test/wire/service-faults.test.ts',
  'test/cli/serve.test.ts',
  'test/plugins/upstream/oauth-signin.test.ts',
  'test/mcp/inspector-cli.test.ts',
  'test/cloud-client/faults.test.ts',
  'test/cli/commands.test.ts',
  'test/cli/concurrency.test.ts',
  'test/cloud/cli.test.ts',
  'test/store/json-file-store-crash.test.ts',
  'test/cli/upstreams-cli.test.ts',
  'test/cloud/db-fault.test.ts',
  'test/plugins/upstream/upstream-stdio.test.ts',
];

const slowRank = (spec: TestSpecification) => {
  const i = SLOW_FIRST.findIndex((f) => spec.moduleId.endsWith(`/${f}`));
  return i === -1 ? SLOW_FIRST.length : i;
};

/** 1 for a file that asks for another environment in its docblock (read from its first lines), else 0 */
const envRank = (spec: TestSpecification) =>
  /@vitest-environment\s+(?!node\b)\S/.test(readFileSync(spec.moduleId, 'utf8').slice(0, 2000)) ? 1 : 0;

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const key = new Map(sorted.map((s) => [s, slowRank(s) * 2 + envRank(s)]));
    // Array.prototype.sort is stable: within a rank, Vitest's own order stays.
    return sorted.sort((a, b) => key.get(a)! - key.get(b)!);
  }
}
