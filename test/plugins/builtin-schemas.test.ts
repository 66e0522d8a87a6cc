import { describe, expect, it } from 'vitest';
import { openCore } from '../helpers/core.ts';

// main/core/calls/tool-schema.ts builds and converts a lazy schema (every built-in tool's) at its first listing or
// call, not at registration; so that no built-in tool can break a listing, each is converted here, as tools/list would.
describe('the built-in tools', () => {
  it("every input and output schema converts to an object's JSON Schema", async () => {
    const core = await openCore();
    const all = core.registry.all();
    expect(new Set(all.map((e) => e.tool.plugin))).toEqual(new Set(['gatehouse', 'site']));
    const bad = all.flatMap((e) =>
      [e.input, e.output].flatMap((schema) => {
        if (!schema) return [];
        try {
          return schema.json.type === 'object' ? [] : [`${e.tool.name}: ${String(schema.json.type)}`];
        } catch (err) {
          return [`${e.tool.name}: ${(err as Error).message}`];
        }
      }),
    );
    expect(all.length).toBeGreaterThan(10);
    expect(bad).toEqual([]);
  });
});
