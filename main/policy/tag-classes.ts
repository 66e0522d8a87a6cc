import type { EntityJson } from '../core/policy/policy.ts';

/**
 * Decisions kept per class of argument value, not per value. A policy that
 * reads an argument only by testing it (`context.args.getTag("path") like
 * "/home/me/notes/*"`, `== "x"`, `!= "x"`) cannot tell apart two values that
 * pass and fail the same tests: its decision, reasons and errors are the same
 * for both. So the engine keys its memory by each such value's outcomes (one
 * bit per test) and asks Cedar only for a class it has not seen; a new path
 * inside ~/notes costs a lookup, not an evaluation (~0.2 ms each).
 *
 * Only tags of the `Args` entity (`context.args`) are classed, and only when
 * every place the policy reads that tag is one of those tests on exactly
 * `context.args`; a tag read any other way (passed to another operator,
 * reached through an `if`, a non-literal tag name) keeps its value in the key.
 */
export type TagTest = { like: readonly PatternPart[] } | { equals: string };
type PatternPart = 'Wildcard' | { Literal: string };

/** Tag name -> the tests the policies apply to it, for tags that are read only by tests. */
export type TagClasses = ReadonlyMap<string, readonly TagTest[]>;

export function tagClassesOf(policies: readonly unknown[]): TagClasses {
  const tests = new Map<string, TagTest[]>();
  const other = new Set<string>();
  const record = (tag: string, test: TagTest) => {
    const list = tests.get(tag) ?? [];
    list.push(test);
    tests.set(tag, list);
  };
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    const n = node as Record<string, unknown>;
    const like = n.like as { left?: unknown; pattern?: unknown } | undefined;
    if (like && isPattern(like.pattern)) {
      const tag = argsTag(like.left);
      if (tag !== null) return record(tag, { like: like.pattern });
    }
    for (const op of ['==', '!=']) {
      const sides = n[op] as { left?: unknown; right?: unknown } | undefined;
      if (!sides) continue;
      const tag = argsTag(sides.left) ?? argsTag(sides.right);
      const literal = stringValue(argsTag(sides.left) !== null ? sides.right : sides.left);
      if (tag !== null && literal !== null) return record(tag, { equals: literal });
    }
    const read = n.getTag as { right?: unknown } | undefined;
    if (read) {
      const tag = stringValue(read.right);
      if (tag === null) return void other.add('\0any');
      other.add(tag);
    }
    for (const v of Object.values(n)) walk(v);
  };
  for (const p of policies) walk(p);
  if (other.has('\0any')) return new Map();
  for (const tag of other) tests.delete(tag);
  return tests;
}

/** The entities as the engine keys them: each classed tag's value replaced by the outcomes of its tests. */
export function classedEntities(entities: readonly EntityJson[], classes: TagClasses): EntityJson[] {
  if (classes.size === 0) return entities as EntityJson[];
  const out: EntityJson[] = [];
  for (const e of entities) {
    if (e.uid.type !== 'Args' || !e.tags) {
      out.push(e);
      continue;
    }
    const tags: Record<string, unknown> = {};
    for (const k in e.tags) {
      const tests = classes.get(k);
      const value = e.tags[k];
      tags[k] = tests && typeof value === 'string' ? classOf(value, tests) : value;
    }
    out.push({ ...e, tags });
  }
  return out;
}

/** Prefixed with NUL, which no classed tag's key can otherwise hold: every value of a classed tag becomes one of these. */
function classOf(value: string, tests: readonly TagTest[]): string {
  let bits = '\0';
  for (const t of tests) bits += ('equals' in t ? value === t.equals : matches(value, t.like)) ? '1' : '0';
  return bits;
}

/** Cedar's `like`: a wildcard matches any run of characters (greedy with one backtrack point: linear in practice, O(n·m) at worst). */
export function matches(value: string, parts: readonly PatternPart[]): boolean {
  const chars = [...value];
  const pattern: Array<'Wildcard' | { Literal: string }> = [];
  for (const part of parts)
    if (part === 'Wildcard') pattern.push(part);
    else for (const ch of part.Literal) pattern.push({ Literal: ch });
  let v = 0;
  let p = 0;
  let starP = -1;
  let starV = 0;
  while (v < chars.length) {
    const part = pattern[p];
    if (part !== undefined && part !== 'Wildcard' && part.Literal === chars[v]) {
      v++;
      p++;
    } else if (part === 'Wildcard') {
      starP = p++;
      starV = v;
    } else if (starP >= 0) {
      p = starP + 1;
      v = ++starV;
    } else return false;
  }
  while (pattern[p] === 'Wildcard') p++;
  return p === pattern.length;
}

const isPattern = (x: unknown): x is PatternPart[] =>
  Array.isArray(x) &&
  x.every(
    (part) =>
      part === 'Wildcard' ||
      (part && typeof part === 'object' && typeof (part as { Literal?: unknown }).Literal === 'string'),
  );

const stringValue = (x: unknown): string | null => {
  const v = x && typeof x === 'object' ? (x as { Value?: unknown }).Value : undefined;
  return typeof v === 'string' ? v : null;
};

/** The literal tag name of `context.args.getTag("name")`, or null for anything else. */
function argsTag(x: unknown): string | null {
  const read = x && typeof x === 'object' ? (x as { getTag?: { left?: unknown; right?: unknown } }).getTag : undefined;
  if (!read) return null;
  const dot = read.left && typeof read.left === 'object' ? (read.left as { '.'?: unknown })['.'] : undefined;
  if (!dot || typeof dot !== 'object') return null;
  const { left, attr } = dot as { left?: unknown; attr?: unknown };
  if (attr !== 'args' || !left || typeof left !== 'object' || (left as { Var?: unknown }).Var !== 'context')
    return null;
  return stringValue(read.right);
}
