import { GatehouseError } from '../../core/errors.ts';
import type { ToolDefinition } from './upstream-data.ts';

/**
 * What one upstream may list (docs/upstreams.md, "Bounds"). Every listed tool
 * is pinned in upstreams.json and compiled for its calls: 10,000 tools made
 * the file 13.5 MB and the service 250 MB larger. A person's real servers list
 * tens of tools (the largest seen, ~100); a listing past a bound is refused
 * whole with what to do, at add (the add fails, nothing is stored) and on a
 * change (the tools pinned before stay as they were, the upstream's health says
 * why), never cut at an arbitrary tool.
 */
export const LISTING_LIMITS = { tools: 2_000, definitionBytes: 256 * 1024, totalBytes: 16 * 1024 * 1024 } as const;

const kib = (n: number) => `${Math.ceil(n / 1024).toLocaleString('en')} KiB`;

export function checkListing(upstream: string, defs: readonly ToolDefinition[]): void {
  const refuse = (what: string) => {
    throw new GatehouseError(
      'upstream_error',
      `upstream '${upstream}' lists ${what}; nothing of this listing is pinned or offered (the bounds are in docs/upstreams.md, "Bounds")`,
      { upstream },
    );
  };
  if (defs.length > LISTING_LIMITS.tools)
    refuse(
      `${defs.length.toLocaleString('en')} tools, more than the ${LISTING_LIMITS.tools.toLocaleString('en')} one upstream may list`,
    );
  let total = 0;
  for (const d of defs) {
    const bytes = Buffer.byteLength(JSON.stringify(d));
    if (bytes > LISTING_LIMITS.definitionBytes)
      refuse(
        `a tool ('${d.name.slice(0, 64)}') whose definition takes ${kib(bytes)}, more than ${kib(LISTING_LIMITS.definitionBytes)}`,
      );
    total += bytes;
  }
  if (total > LISTING_LIMITS.totalBytes)
    refuse(`tool definitions of ${kib(total)} in all, more than ${kib(LISTING_LIMITS.totalBytes)}`);
}
