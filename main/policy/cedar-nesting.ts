import { GatehouseError } from '../core/errors.ts';

/**
 * How deeply a policy may nest. Cedar's parser recurses per level on a fixed stack inside its WASM module:
 * about 150 nested brackets (or 800 nested `if`s) overflow it, and an overflow does not only fail that call,
 * it leaves the module's memory broken, so every later policy decision of the service throws. So a text is
 * measured before Cedar sees it, with a wide margin below what breaks: real policies nest a few levels.
 */
export const MAX_POLICY_NESTING = 32;
export const MAX_IFS_PER_STATEMENT = 64;

/** Throws `invalid_value` naming the line when the text nests deeper than Cedar can take. */
export function checkNesting(text: string): void {
  let depth = 0;
  let ifs = 0;
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\n') line++;
    else if (ch === '"') {
      // a string literal: brackets in it are text (a backslash escapes the next character)
      for (i++; i < text.length && text[i] !== '"'; i++) {
        if (text[i] === '\\') i++;
        else if (text[i] === '\n') line++;
      }
    } else if (ch === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      line++;
    } else if (ch === '(' || ch === '[' || ch === '{') {
      if (++depth > MAX_POLICY_NESTING)
        throw new GatehouseError(
          'invalid_value',
          `the policy nests brackets more than ${MAX_POLICY_NESTING} deep (line ${line}): write the condition flatter`,
          { line },
        );
    } else if (ch === ')' || ch === ']' || ch === '}') depth = Math.max(0, depth - 1);
    else if (ch === ';' && depth === 0) ifs = 0;
    else if (
      ch === 'i' &&
      text[i + 1] === 'f' &&
      !/[A-Za-z0-9_]/.test(text[i - 1] ?? ' ') &&
      !/[A-Za-z0-9_]/.test(text[i + 2] ?? ' ')
    ) {
      if (++ifs > MAX_IFS_PER_STATEMENT)
        throw new GatehouseError(
          'invalid_value',
          `a policy statement holds more than ${MAX_IFS_PER_STATEMENT} if-expressions (line ${line}): split it`,
          { line },
        );
      i++;
    }
  }
}
