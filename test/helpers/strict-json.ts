import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * "jq must read every file we write": each JSON or JSONL file is checked with
 * the real jq when the machine has it (`jq empty` parses every value, and jq
 * 1.6 refuses lone surrogate escapes), else with a strict decoder that does
 * the same: fatal UTF-8 decoding, JSON.parse of each value, and no escaped
 * lone surrogate. Returns one message per file that fails.
 *
 * The verdict depends on the bytes alone, so bytes already read clean are not
 * read again, and the rest go to one jq (`--slurpfile` parses each file on its
 * own, as `jq empty FILE` does): a test that checks a growing data dir after
 * every step (the crash tests) runs one jq on what changed, not one per file.
 */
export const HAS_JQ = spawnSync('jq', ['--version']).status === 0;

/** sha256 of contents every check has passed (jq, or the strict decoder where jq is missing) */
const passed = new Set<string>();

export async function strictJsonProblems(files: readonly string[]): Promise<string[]> {
  const unseen: Array<{ file: string; bytes: Buffer; digest: string }> = [];
  for (const file of files) {
    const bytes = await readFile(file);
    const digest = `${file.endsWith('.jsonl') ? 'l' : 'j'}:${createHash('sha256').update(bytes).digest('hex')}`;
    if (!passed.has(digest)) unseen.push({ file, bytes, digest });
  }
  if (!unseen.length) return [];
  const problems: string[] = [];
  // All clean in one jq (the common case); else each on its own, for its message.
  const allClean = HAS_JQ && (await jqProblem(unseen.map((u) => u.bytes))) === null;
  for (const u of unseen) {
    const problem = allClean
      ? null
      : HAS_JQ
        ? await jqProblem([u.bytes])
        : strictDecode(u.bytes, u.file.endsWith('.jsonl'));
    if (problem) problems.push(`${u.file}: ${problem}`);
    else passed.add(u.digest);
  }
  return problems;
}

/** jq on exactly the bytes hashed (a file may change after its read): copies, each parsed as a file of its own. */
async function jqProblem(contents: readonly Buffer[]): Promise<string | null> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-jq-'));
  try {
    const args = ['-n'];
    for (const [i, bytes] of contents.entries()) {
      await writeFile(join(dir, String(i)), bytes);
      args.push('--slurpfile', `f${i}`, join(dir, String(i)));
    }
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn('jq', [...args, 'empty'], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stderr }));
    });
    return r.code === 0 ? null : `jq: ${r.stderr.trim().replace(/^jq: Bad JSON in --slurpfile f\d+ \S+: /, '')}`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const LONE_ESCAPE = /(?<!\\)(?:\\\\)*\\u(?:d[89ab][0-9a-f]{2}(?!\\ud[c-f][0-9a-f]{2})|d[c-f][0-9a-f]{2})/i;

function strictDecode(bytes: Buffer, jsonl: boolean): string | null {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return 'not valid UTF-8';
  }
  const docs = jsonl ? text.split('\n').filter((l, i, all) => l !== '' || i < all.length - 1) : [text];
  for (const [i, doc] of docs.entries()) {
    try {
      JSON.parse(doc);
    } catch (e) {
      return `value ${i + 1} does not parse: ${(e as Error).message}`;
    }
    if (LONE_ESCAPE.test(doc)) return `value ${i + 1} holds a lone surrogate escape`;
  }
  return null;
}
