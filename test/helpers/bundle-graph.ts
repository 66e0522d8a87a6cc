import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Every file a built bundle's entries import statically, with its text: what loads before any dynamic import
 * runs. The tests that keep a start-up path small (no MCP SDK before ready, no zod for --version) ask it.
 */
export function staticImports(...entries: string[]): Map<string, string> {
  const seen = new Map<string, string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    const text = readFileSync(file, 'utf8');
    seen.set(file, text);
    for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s*"(\.\.?\/[^"]+)"|^import\s*"(\.\.?\/[^"]+)"/gm))
      visit(join(dirname(file), m[1] ?? m[2]!));
  };
  for (const e of entries) visit(e);
  return seen;
}

/** The files of `graph` that hold a module of this package (esbuild's `// node_modules/<pkg>/` markers). */
export const filesWith = (graph: Map<string, string>, pkg: RegExp): string[] =>
  [...graph].filter(([, text]) => pkg.test(text)).map(([file]) => file);
