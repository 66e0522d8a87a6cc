import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import type { CurrentTarget, FieldChange } from '../../contract/staged.ts';
import { compactDiff } from '../../lib/line-diff.ts';
import type { UpstreamResult } from './connection.ts';
import type { PinnedTool } from './upstream-data.ts';
import { valueAt, type PreviewRecipe, type RecipeMatch, type RecipeRead } from './preview-recipes.ts';

/**
 * A write's target as the desk shows it, from the recipe's reads
 * (preview-recipes.ts): a line diff of a file, or what the named things are
 * now. Bounded: a read gets `readMs` (PREVIEW_LIMITS.readMs unless the
 * service is told otherwise: tests shorten it), a text past `textChars`
 * is shown by its size and hash, a diff by its first `diffLines` lines. A
 * read that fails, hangs or answers too much leaves the arguments preview
 * with the reason; it never fails the staging.
 */
export const PREVIEW_LIMITS = {
  readMs: 5_000,
  textChars: 1_000_000,
  diffLines: 400,
  lineChars: 500,
  stateChars: 20_000,
};

export interface TargetPreview {
  changes: FieldChange[];
  current: CurrentTarget;
}

export type ReadCall = (pin: PinnedTool, args: Record<string, unknown>, signal: AbortSignal) => Promise<UpstreamResult>;

export async function targetPreview(
  match: RecipeMatch,
  args: Record<string, unknown>,
  call: ReadCall,
  parent?: AbortSignal,
  readMs: number = PREVIEW_LIMITS.readMs,
): Promise<TargetPreview> {
  const { recipe } = match;
  const results: UpstreamResult[] = [];
  try {
    if (match.stat) {
      const stat = await bounded(call, match.stat.pin, readArgs(match.stat.read, args), readMs, parent);
      const size = sizeOf(stat);
      if (size !== null && size > PREVIEW_LIMITS.textChars) return tooLarge(recipe, args, size, stat);
    }
    for (const { read, pin } of match.reads)
      results.push(await bounded(call, pin, readArgs(read, args), readMs, parent));
  } catch (e) {
    return unavailable((e as Error).message);
  }
  if (recipe.shows === 'state') return stateOf(match.reads, results);
  return fileOf(recipe, args, results[0]!);
}

function readArgs(read: RecipeRead, args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, path] of Object.entries(read.args)) {
    const v = valueAt(args, path);
    if (v === undefined) throw new Error(`the write has no ${[path].flat().join(' / ')} to read ${read.tool} with`);
    out[name] = v;
  }
  return out;
}

async function bounded(
  call: ReadCall,
  pin: PinnedTool,
  args: Record<string, unknown>,
  readMs: number,
  parent?: AbortSignal,
): Promise<UpstreamResult> {
  const timeout = AbortSignal.timeout(readMs);
  const signal = parent ? AbortSignal.any([parent, timeout]) : timeout;
  const late = `${pin.name} did not answer within ${readMs / 1000} s`;
  let timer: NodeJS.Timeout | undefined;
  // Also bounded here: a read that ignores its signal must not hold the staging.
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(late)), readMs + 100);
  });
  try {
    return await Promise.race([call(pin, args, signal), expired]);
  } catch (e) {
    if (timeout.aborted && !parent?.aborted) throw new Error(late, { cause: e });
    throw new Error(`${pin.name} failed: ${oneLine((e as Error).message)}`, { cause: e });
  } finally {
    clearTimeout(timer);
  }
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const oneLine = (s: string, max = 200) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};
const plural = (n: number, what: string) => `${n.toLocaleString('en')} ${what}${n === 1 ? '' : 's'}`;

function textOf(r: UpstreamResult): string {
  const structured = r.structuredContent?.content;
  if (typeof structured === 'string') return structured;
  return r.content.map((c) => (typeof c.text === 'string' ? c.text : '')).join('\n');
}

function unavailable(reason: string): TargetPreview {
  const why = `preview unavailable: ${oneLine(reason, 300)}`;
  return { changes: [], current: { summary: why, version: null, unavailable: why, states: [] } };
}

/** The size a stat read reports: a structured `size`, or a `size: N` line of its text; null when it says none (a new file). */
function sizeOf(r: UpstreamResult): number | null {
  if (r.isError) return null;
  const structured = r.structuredContent?.size;
  if (typeof structured === 'number') return structured;
  const m = /^size: (\d+)$/m.exec(textOf(r));
  return m ? Number(m[1]) : null;
}

/** A file too large to read whole: its size, and as its version what the stat read says (size, times) but the access time. */
function tooLarge(
  recipe: PreviewRecipe,
  args: Record<string, unknown>,
  size: number,
  stat: UpstreamResult,
): TargetPreview {
  const path = String(valueAt(args, recipe.path ?? 'path'));
  const after = recipe.shows === 'file_write' ? valueAt(args, recipe.content ?? 'content') : undefined;
  const version = sha256(textOf(stat).replace(VOLATILE, ''));
  return {
    changes: [
      {
        field: path,
        before: `file too large to show: ${plural(size, 'byte')}`,
        after:
          typeof after === 'string'
            ? `${plural(after.split('\n').length, 'line')} of new text, ${sizeText(after)}`
            : undefined,
      },
    ],
    current: {
      summary: `${basename(path) || path}: file too large to show, replaced`,
      version,
      unavailable: null,
      states: [],
    },
  };
}

const sizeText = (t: string) => `${plural(Buffer.byteLength(t), 'byte')}, sha256 ${sha256(t).slice(0, 16)}…`;

const NOT_FOUND = /ENOENT|no such file|not found|does not exist/i;
const looksBinary = (t: string) => t.includes('\u0000') || (t.match(/\uFFFD/g)?.length ?? 0) > t.length / 100;

function fileOf(recipe: PreviewRecipe, args: Record<string, unknown>, r: UpstreamResult): TargetPreview {
  const path = String(valueAt(args, recipe.path ?? 'path'));
  const name = basename(path) || path;
  const exists = !r.isError;
  const before = exists ? textOf(r) : '';
  if (r.isError && !NOT_FOUND.test(textOf(r)))
    return unavailable(`the read answered an error: ${textOf(r) || 'no message'}`);
  const version = exists ? sha256(before) : 'absent';
  if (exists && (before.length > PREVIEW_LIMITS.textChars || looksBinary(before))) {
    const what = looksBinary(before) ? 'binary file' : 'file too large to show';
    const after = newText(recipe, args, null);
    const change: FieldChange = {
      field: path,
      before: `${what}: ${sizeText(before)}`,
      after:
        typeof after === 'string'
          ? `${plural(after.split('\n').length, 'line')} of new text, ${sizeText(after)}`
          : undefined,
    };
    return {
      changes: [change],
      current: { summary: `${name}: ${what}, replaced`, version, unavailable: null, states: [] },
    };
  }
  const after = newText(recipe, args, exists ? before : null);
  if (typeof after !== 'string') {
    const base = unavailable(after.error);
    return { ...base, current: { ...base.current, version } };
  }
  if (!exists) {
    const lines = after.split('\n');
    const shown = lines.slice(0, PREVIEW_LIMITS.diffLines).map((l) => `+ ${clip(l)}`);
    if (lines.length > PREVIEW_LIMITS.diffLines)
      shown.push(`… ${plural(lines.length - PREVIEW_LIMITS.diffLines, 'more line')} not shown`);
    const summary = `${name}: new file, ${plural(lines.length, 'line')}`;
    return {
      changes: [{ field: path, after: [`@@ line 1 @@`, ...shown].join('\n') }],
      current: { summary, version, unavailable: null, states: [] },
    };
  }
  if (after === before)
    return { changes: [], current: { summary: `${name}: unchanged`, version, unavailable: null, states: [] } };
  const d = compactDiff(before, after, {
    context: 3,
    maxLines: PREVIEW_LIMITS.diffLines,
    maxLineChars: PREVIEW_LIMITS.lineChars,
  });
  return {
    changes: [{ field: path, before: d.before, after: d.after }],
    current: { summary: `${name}: ${changeCount(d.removed, d.added)}`, version, unavailable: null, states: [] },
  };
}

/** "1 line changed" for a replacement, "2 lines removed, 1 added" otherwise. */
const changeCount = (removed: number, added: number) =>
  removed === added
    ? `${plural(added, 'line')} changed`
    : [
        removed ? `${plural(removed, 'line')} removed` : '',
        added ? `${removed ? added : plural(added, 'line')} added` : '',
      ]
        .filter(Boolean)
        .join(', ');

const clip = (s: string) => (s.length > PREVIEW_LIMITS.lineChars ? `${s.slice(0, PREVIEW_LIMITS.lineChars - 1)}…` : s);

/** The file's text after the write, or why it cannot be known here. */
function newText(
  recipe: PreviewRecipe,
  args: Record<string, unknown>,
  current: string | null,
): string | { error: string } {
  if (recipe.shows === 'file_write') {
    const v = valueAt(args, recipe.content ?? 'content');
    return typeof v === 'string' ? v : { error: `the write's ${recipe.content} is not text` };
  }
  if (current === null) return { error: 'the file to edit does not exist' };
  const edits = valueAt(args, recipe.edits ?? 'edits');
  if (!Array.isArray(edits)) return { error: `the write's ${recipe.edits} is not a list of edits` };
  // As server-filesystem reads it: line endings normalized, each edit replacing the first exact match in turn.
  let text = current.replace(/\r\n/g, '\n');
  for (const [i, e] of edits.entries()) {
    const { oldText, newText } = (e ?? {}) as { oldText?: unknown; newText?: unknown };
    if (typeof oldText !== 'string' || typeof newText !== 'string')
      return { error: `edit ${i + 1} has no oldText/newText text` };
    const from = oldText.replace(/\r\n/g, '\n');
    const at = text.indexOf(from);
    if (at === -1)
      return {
        error: `edit ${i + 1}'s oldText is not in the file as written (the server may still match it ignoring indentation)`,
      };
    text = text.slice(0, at) + newText.replace(/\r\n/g, '\n') + text.slice(at + from.length);
  }
  return text;
}

/** A read's own access time is no part of the target's state: left out so reading it again finds it unchanged. */
const VOLATILE = /^accessed:.*$/gim;

function stateOf(reads: Array<{ read: RecipeRead; pin: PinnedTool }>, results: UpstreamResult[]): TargetPreview {
  const states = results.map((r, i) => {
    const { read } = reads[i]!;
    const raw = textOf(r) || (r.structuredContent ? JSON.stringify(r.structuredContent, null, 2) : '');
    const text = (r.isError ? `answered an error: ${raw}` : raw).replace(VOLATILE, '').trim();
    const label = read.label ? `${read.label} (${read.tool})` : read.tool;
    return {
      label,
      text:
        text.length > PREVIEW_LIMITS.stateChars
          ? `${text.slice(0, PREVIEW_LIMITS.stateChars)}\n… (cut at ${plural(PREVIEW_LIMITS.stateChars, 'character')})`
          : text,
    };
  });
  const version = sha256(JSON.stringify(states));
  const summary = `now: ${states.map((s) => s.label).join(', ')} read`;
  return { changes: [], current: { summary, version, unavailable: null, states } };
}
