/**
 * Servers known to hold state for the client that uses them, where one process shared by every agent mixes
 * their state (one agent's browser page is the next one's snapshot, one thought history for all). Pure and
 * shared: `upstreams add`, `clients import` and the console suggest `process: "per-client"` for them
 * (docs/upstreams.md, "One process per client"). Matched on the package in the command line, as text.
 */
const STATEFUL: ReadonlyArray<{ pattern: RegExp; why: string }> = [
  { pattern: /@playwright\/mcp(@[^/\s]*)?(\/|$)/, why: 'a browser: each agent would drive the same page' },
  {
    pattern: /server-sequential-thinking(@[^/\s]*)?(\/|$)/,
    why: 'a thought history: every agent would add to the same one',
  },
  {
    pattern: /server-memory(@[^/\s]*)?(\/|$)/,
    why: 'a knowledge graph: every agent would read and write the same one',
  },
];

/** Why one process per client suits this command line (a known stateful server), or null. */
export function statefulServer(command: string, args: readonly string[]): string | null {
  for (const a of [command, ...args]) {
    const hit = STATEFUL.find((s) => s.pattern.test(a));
    if (hit) return `it keeps ${hit.why}; give it one process per client (process: "per-client")`;
  }
  return null;
}
