import { describe, expect, it } from 'vitest';
import type { PolicyQuery } from '../../main/core/policy/policy.ts';
import { createCedarEngine } from '../../main/policy/cedar-engine.ts';
import { classedEntities, matches, tagClassesOf } from '../../main/policy/tag-classes.ts';
import { toolQuery } from './policy-query.ts';

/** Decisions kept per class of argument value: the classes are exactly what Cedar itself can tell apart. */
const cedar = async () =>
  (await import('@cedar-policy/cedar-wasm/nodejs')) as unknown as {
    policySetTextToParts(t: string): { policies: string[] };
    policyToJson(p: string): { json: unknown };
  } satisfies object;
const jsonOf = async (text: string) => {
  const c = await cedar();
  return c.policySetTextToParts(text).policies.map((p) => c.policyToJson(p).json);
};
const withArgs = (args: Record<string, string>): PolicyQuery => {
  const q = toolQuery('fs_write_file');
  q.entities.find((e) => e.uid.type === 'Args')!.tags = args;
  return q;
};
const PERMIT = '\npermit (principal, action, resource);';

describe('argument values classed by the tests a policy applies to them', () => {
  it("matches Cedar's own `like` for every value and pattern tried (wildcards, escaped stars, Unicode, empty)", async () => {
    const patterns = ['/home/me/notes/*', '*', '', 'a*b*c', '*.md', 'x\\*y', '**a', 'é*ü', '*/../*', 'a*a*a*a*b'];
    const values = ['', 'a', 'abc', 'aXbYc', 'ac', '/home/me/notes/a.md', '/home/me/notes', 'x*y', 'xzy', 'éaü'];
    values.push('é🙂ü', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaab', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', '/a/../b', 'b.md');
    for (const pattern of patterns) {
      const text = `@id("p") forbid (principal, action, resource) when { context.args.hasTag("v") && context.args.getTag("v") like "${pattern.replace(/\\/g, '\\\\')}" };${PERMIT}`;
      const engine = createCedarEngine({ activeText: () => text, cacheSize: 0 });
      const body = ((await jsonOf(text))[0] as { conditions: Array<{ body: { '&&': { right: unknown } } }> })
        .conditions[0]!.body['&&'].right as { like: { pattern: never } };
      const parts = body.like.pattern;
      for (const v of values) {
        const denied = (await engine.decide(withArgs({ v }))).decision === 'deny';
        expect(matches(v, parts), `${JSON.stringify(v)} like ${JSON.stringify(pattern)}`).toBe(denied);
      }
    }
  });

  it('classes a tag only when every read of it is a like / == / != test on context.args', async () => {
    const classed = async (body: string) => [
      ...tagClassesOf(await jsonOf(`forbid (principal, action, resource) when { ${body} };`)).keys(),
    ];
    expect(await classed('context.args.hasTag("path") && context.args.getTag("path") like "/n/*"')).toEqual(['path']);
    expect(await classed('context.args.getTag("m") == "x" || "y" != context.args.getTag("m")')).toEqual(['m']);
    // Read another way as well: its value stays in the key.
    expect(
      await classed('context.args.getTag("p") like "*" && decimal(context.args.getTag("p")) > decimal("1.0")'),
    ).toEqual([]);
    expect(
      await classed(
        '(if true then context.args else context.args).getTag("p") like "*" && context.args.getTag("q") == "1"',
      ),
    ).toEqual(['q']);
    expect(await classed('context.arg_lists.getTag("p").contains("a") && context.args.getTag("p") == "a"')).toEqual([]);
    // A tag named by a value: any tag may be read, so none is classed.
    expect(await classed('context.args.getTag("p") == "a" && context.args.getTag(principal.login) == "b"')).toEqual([]);
  });

  it('gives values a test cannot tell apart one key, and values it can tell apart different keys', async () => {
    const classes = tagClassesOf(
      await jsonOf(
        'forbid (principal, action, resource) unless { context.args.getTag("path") like "/home/me/notes/*" };',
      ),
    );
    const key = (args: Record<string, string>) => JSON.stringify(classedEntities(withArgs(args).entities, classes));
    expect(key({ path: '/home/me/notes/a.md' })).toBe(key({ path: '/home/me/notes/b/c.md' }));
    expect(key({ path: '/home/me/notes/a.md' })).not.toBe(key({ path: '/home/me/.ssh/id_rsa' }));
    // An argument the policy does not class keeps its value; a missing one stays missing.
    expect(key({ path: '/home/me/notes/a.md', mode: '1' })).not.toBe(key({ path: '/home/me/notes/a.md', mode: '2' }));
    expect(key({})).not.toBe(key({ path: '/elsewhere' }));
  });

  it('decides every value as Cedar does when asked afresh, for policies mixing classed and unclassed reads', async () => {
    const policies = [
      '@id("outside") forbid (principal, action, resource) unless { context.args.hasTag("path") && context.args.getTag("path") like "/home/me/notes/*" };',
      '@id("exact") forbid (principal, action, resource) when { context.args.hasTag("path") && context.args.getTag("path") == "/home/me/notes/locked.md" };',
      '@id("mixed") forbid (principal, action, resource) when { context.args.hasTag("mode") && context.args.getTag("mode") like "*7*" && context.args.hasTag("path") && context.args.getTag("path") != "/tmp/x" };',
    ];
    const text = policies.join('\n') + PERMIT;
    const kept = createCedarEngine({ activeText: () => text });
    const fresh = createCedarEngine({ activeText: () => text, cacheSize: 0 });
    const paths = [
      '/home/me/notes/a.md',
      '/home/me/notes/locked.md',
      '/home/me/.ssh/id_rsa',
      '/tmp/x',
      '/home/me/notes/',
    ];
    const modes = [undefined, '0600', '0777', '7', ''];
    const seen = new Set<string>();
    for (let round = 0; round < 3; round++)
      for (const path of paths)
        for (const mode of modes) {
          const args: Record<string, string> = { path: `${path}${round ? `-${round}` : ''}` };
          if (mode !== undefined) args.mode = mode;
          const [a, b] = [await kept.decide(withArgs(args)), await fresh.decide(withArgs(args))];
          expect(a, JSON.stringify(args)).toEqual(b);
          seen.add(`${a.decision}:${a.policies.join(',')}`);
        }
    // Every policy denied something and something was allowed: the comparison covers each rule.
    for (const id of ['outside', 'exact']) expect([...seen].some((s) => s.includes(id))).toBe(true);
    expect([...seen].some((s) => s.startsWith('allow:'))).toBe(true);
  });
});
