import { RE2JS } from 're2js';

/**
 * Regular expressions that cannot freeze the service: what a JSON Schema's
 * `pattern` and `patternProperties` are checked with (json-schema-validator.ts).
 * The schemas come from upstreams, a person approves them without reading
 * their patterns, and the values come from agents and upstreams: JavaScript's
 * backtracking engine takes exponential time on `^(a+)+$` and 30 characters,
 * on the event loop. RE2JS (a pure JavaScript port of RE2, no native addon, no
 * WASM) matches in time linear in the text for a given pattern
 * (docs/decisions.md, "Schema patterns run on RE2JS").
 *
 * Linear is not free: the work is about the pattern's program size times the
 * text's length. One validation (`withPatternBudget`) may spend PATTERN_BUDGET
 * units; a value that would take more is refused with `PatternBudgetExceeded`,
 * never checked slowly.
 */

/** Work units one validation may spend on patterns: (program size + 8) per character; about 0.1-0.3 s at worst. */
export const PATTERN_BUDGET = 15_000_000;

/** A pattern RE2 cannot run (a backreference, lookaround, a repeat over 1000): the schema cannot be used. */
export class UnsupportedPattern extends Error {
  constructor(pattern: string, reason: string) {
    super(
      `the pattern ${JSON.stringify(pattern.length > 120 ? `${pattern.slice(0, 120)}…` : pattern)} cannot be checked in linear time (Gatehouse checks schema patterns with RE2, which has no backreferences or lookaround): ${reason.replace(/^error parsing regexp: /, '')}`,
    );
    this.name = 'UnsupportedPattern';
  }
}

/** A validation whose pattern checks would take longer than PATTERN_BUDGET allows. */
export class PatternBudgetExceeded extends Error {
  constructor() {
    super(
      `a value is too long to check against the schema's patterns within Gatehouse's bound (${PATTERN_BUDGET} units of work, about a megabyte of text for a short pattern)`,
    );
    this.name = 'PatternBudgetExceeded';
  }
}

let budget = Number.POSITIVE_INFINITY;

/** Runs one (synchronous) validation with its own pattern budget. */
export function withPatternBudget<T>(units: number, run: () => T): T {
  const outer = budget;
  budget = units;
  try {
    return run();
  } finally {
    budget = outer;
  }
}

const HEX4 = /^[0-9a-fA-F]{4}$/;

/**
 * ECMAScript's escapes RE2 spells otherwise: `\uXXXX` and `\u{X…}` are `\x{X…}` (a surrogate pair as one code point).
 * Linear: one pass, each escape copied whole, so `\\u0041` stays a backslash and a `u`.
 */
export function toRe2Syntax(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c !== '\\' || i + 1 >= pattern.length) {
      out += c;
      continue;
    }
    const next = pattern[i + 1]!;
    if (next === 'u' && HEX4.test(pattern.slice(i + 2, i + 6))) {
      let cp = parseInt(pattern.slice(i + 2, i + 6), 16);
      i += 5;
      const low = pattern.slice(i + 1, i + 7);
      if (cp >= 0xd800 && cp <= 0xdbff && low.startsWith('\\u') && HEX4.test(low.slice(2))) {
        const lo = parseInt(low.slice(2), 16);
        if (lo >= 0xdc00 && lo <= 0xdfff) {
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          i += 6;
        }
      }
      out += `\\x{${cp.toString(16)}}`;
      continue;
    }
    if (next === 'u' && pattern[i + 2] === '{') {
      const end = pattern.indexOf('}', i + 3);
      if (end > 0 && /^[0-9a-fA-F]{1,6}$/.test(pattern.slice(i + 3, end))) {
        out += `\\x{${pattern.slice(i + 3, end)}}`;
        i = end;
        continue;
      }
    }
    out += c + next;
    i++;
  }
  return out;
}

/** The engine Ajv's `code.regExp` takes: `pattern` searched for anywhere in the text, as JSON Schema's `pattern` is. */
export function linearRegExp(pattern: string, _flags?: string): { test(text: string): boolean; toString(): string } {
  let re: RE2JS;
  try {
    re = RE2JS.compile(toRe2Syntax(pattern));
  } catch (e) {
    throw new UnsupportedPattern(pattern, e instanceof Error ? e.message : String(e));
  }
  const cost = re.programSize() + 8;
  return {
    test(text: string): boolean {
      budget -= cost * text.length;
      if (budget < 0) throw new PatternBudgetExceeded();
      return re.test(text);
    },
    // Ajv keys its compiled patterns by this
    toString: () => `re2:${pattern}`,
  };
}
