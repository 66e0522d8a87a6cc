import { describe, expect, it } from 'vitest';
import { Registry, type RegisteredTool } from '../../main/core/calls/registry.ts';
import { jsonSchemaCompiler } from '../../main/mcp/json-schema.ts';
import { answerText, ToolListCache } from '../../main/mcp/list-cache.ts';

const entry = (name: string, revision: number) => ({ tool: { name }, revision }) as unknown as RegisteredTool;
const listing = (e: RegisteredTool) => ({ name: e.tool.name, rev: e.revision });

describe('tools/list answers made once per visible set', () => {
  it('answers the same set with the same result, whose prepared text is exactly what JSON.stringify gives', () => {
    const cache = new ToolListCache(listing);
    const a = [entry('a', 1), entry('b', 2)];
    const first = cache.result(a);
    expect(cache.result([...a])).toBe(first);
    const message = { result: first, jsonrpc: '2.0', id: 'x"1' };
    expect(JSON.parse(answerText(message))).toEqual(JSON.parse(JSON.stringify(message)));
    expect(answerText(message)).toBe(JSON.stringify(message));
    expect(Object.isFrozen(first)).toBe(true);
  });

  it('a new revision of any tool (a changed definition) is a new set; a message with more fields, or another result, is stringified as it is', () => {
    const cache = new ToolListCache(listing);
    const before = cache.result([entry('a', 1), entry('b', 2)]);
    const after = cache.result([entry('a', 1), entry('b', 3)]);
    expect(after).not.toBe(before);
    expect((after as { tools: Array<{ rev: number }> }).tools[1]!.rev).toBe(3);
    const withMore = { result: after, jsonrpc: '2.0', id: 1, extra: true };
    expect(answerText(withMore)).toBe(JSON.stringify(withMore));
    const plain = { result: { tools: [] }, jsonrpc: '2.0', id: 2 };
    expect(answerText(plain)).toBe(JSON.stringify(plain));
  });

  it('keeps a bounded number of sets, the least recently used leaving first', () => {
    const cache = new ToolListCache(listing);
    const kept = cache.result([entry('keep', 1)]);
    for (let i = 0; i < 40; i++) {
      cache.result([entry('x', 100 + i)]);
      expect(cache.result([entry('keep', 1)])).toBe(kept);
    }
    const old = cache.result([entry('x', 100)]);
    expect(cache.result([entry('x', 100)])).toBe(old);
    expect((cache as unknown as { lists: Map<string, object> }).lists.size).toBeLessThanOrEqual(16);
  });

  it("never answers one registry's listing for another's: revisions are unique in the process (two services in one)", async () => {
    const plugin = (id: string, tool: string) => ({
      id,
      kind: 'site' as const,
      tools: () => [
        {
          name: tool,
          plugin: id,
          title: tool,
          description: tool,
          input: { type: 'object' as const },
          write: false,
          capability: 'read' as const,
          feature: 'f',
          run: async () => ({ content: [] }),
        },
      ],
    });
    const [one, two] = [new Registry(jsonSchemaCompiler), new Registry(jsonSchemaCompiler)];
    one.add(plugin('p1', 'alpha') as never);
    two.add(plugin('p2', 'beta') as never);
    const cache = new ToolListCache(listing);
    const names = (r: Registry) =>
      (cache.result(r.all()) as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    expect(names(one)).toEqual(['alpha']);
    expect(names(two)).toEqual(['beta']);
  });
});
