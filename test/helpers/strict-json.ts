import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';

/**
 * "jq must read every file we write": each JSON or JSONL file is checked with
 * the real jq when the machine has it (`jq empty` parses every value, and jq
 * 1.6 refuses lone surrogate escapes), else with a strict decoder that does
 * the same: fatal UTF-8 decoding, JSON.parse of each value, and no escaped
 * lone surrogate. Returns one message per file that fails.
 */
export const HAS_JQ = spawnSync('jq', ['--version']).status === 0;

export async function strictJsonProblems(files: readonly string[]): Promise<string[]> {
  const problems: string[] = [];
  for (const file of files) {
    const jsonl = file.endsWith('.jsonl');
    if (HAS_JQ) {
      const r = spawnSync('jq', ['empty', file], { encoding: 'utf8' });
      if (r.status !== 0) problems.push(`${file}: jq: ${r.stderr.trim()}`);
      continue;
    }
    const problem = strictDecode(await readFile(file), jsonl);
    if (problem) problems.push(`${file}: ${problem}`);
  }
  return problems;
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
