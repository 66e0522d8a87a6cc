import { describe, expect, it } from 'vitest';
import type { PolicyQuery } from '../../main/core/policy/policy.ts';
import { toolQuery } from './policy-query.ts';
import { createCedarEngine } from '../../main/policy/cedar-engine.ts';
import { narrowed, readsOf } from '../../main/policy/policy-reads.ts';

/** The Cedar adapter on its own: what it refuses to keep, and that it fails closed. */
const q = toolQuery;

describe('the Cedar engine', () => {
  const engine = createCedarEngine({ activeText: () => null });
  const refused = async (text: string) =>
    engine.check(text).then(
      () => null,
      (e: { code: string; message: string }) => e,
    );

  it('refuses duplicate ids, templates, an empty policy and a wrong type, with a message that says which', async () => {
    expect(
      await refused('@id("a") permit (principal, action, resource);\n@id("a") forbid (principal, action, resource);'),
    ).toMatchObject({ code: 'invalid_value', message: expect.stringContaining("share the id 'a'") });
    expect(await refused('permit (principal == ?principal, action, resource);')).toMatchObject({
      code: 'invalid_value',
      message: expect.stringContaining('templates'),
    });
    expect(await refused('// nothing but a comment\n')).toMatchObject({
      code: 'invalid_value',
      message: expect.stringContaining('no statement'),
    });
    expect(await refused('permit (principal, action, resource) when { principal.role == 3 };')).toMatchObject({
      code: 'invalid_value',
      message: expect.stringContaining('does not validate'),
    });
    expect(await refused('@id("bad id with spaces") permit (principal, action, resource);')).toMatchObject({
      code: 'invalid_value',
    });
    expect(await engine.check('@id("__proto__") permit (principal, action == Action::"call", resource);')).toEqual({
      policies: ['__proto__'],
    });
  });

  it('answers a text asked again as the first time, and another text for itself (the last answer is kept)', async () => {
    const good = '@id("reads") permit (principal, action == Action::"call", resource);';
    const bad = '@id("a") permit (principal, action, resource);\n@id("a") forbid (principal, action, resource);';
    const other = '@id("other") forbid (principal, action, resource);';
    const fresh = createCedarEngine({ activeText: () => null });
    for (let round = 0; round < 2; round++) {
      expect(await fresh.check(good)).toEqual({ policies: ['reads'] });
      expect(await fresh.check(good)).toEqual({ policies: ['reads'] });
      await expect(fresh.check(bad)).rejects.toMatchObject({ code: 'invalid_value' });
      await expect(fresh.check(bad)).rejects.toMatchObject({ message: expect.stringContaining("share the id 'a'") });
      expect(await fresh.check(other)).toEqual({ policies: ['other'] });
    }
    // The answer handed out is a copy: changing it changes no later answer.
    const answer = await fresh.check(other);
    answer.policies.push('added');
    expect(await fresh.check(other)).toEqual({ policies: ['other'] });
  });

  it('refuses every call (policy_unavailable) when the stored policy no longer validates: never lets one through', async () => {
    const broken = createCedarEngine({
      activeText: () => 'permit (principal, action, resource) when { principal.gone };',
    });
    await expect(broken.decide(q())).rejects.toMatchObject({ code: 'policy_unavailable' });
  });

  it('follows the active text: a new policy applies to the next decision', async () => {
    let text: string | null = 'permit (principal, action, resource);';
    const live = createCedarEngine({ activeText: () => text });
    expect((await live.decide(q())).decision).toBe('allow');
    text =
      '@id("stop") forbid (principal, action, resource == Tool::"pages_list");\npermit (principal, action, resource);';
    expect(await live.decide(q())).toMatchObject({ decision: 'deny', policies: ['stop'] });
    expect((await live.decide(q('pages_get'))).decision).toBe('allow');
  });

  it('knows which actions some permit can apply to, so the gate skips run_without_approval when none can', async () => {
    let text: string | null = null;
    const e = createCedarEngine({ activeText: () => text });
    expect(await e.mayPermit('call')).toBe(true);
    expect(await e.mayPermit('run_without_approval')).toBe(false);
    for (const scope of [
      'action',
      'action == Action::"run_without_approval"',
      'action in [Action::"call", Action::"run_without_approval"]',
    ]) {
      text = `${e.defaultText()}\n@id("x") permit (principal, ${scope}, resource) when { resource.name == "pages_create" };`;
      expect(await e.mayPermit('run_without_approval'), scope).toBe(true);
    }
    // a forbid on every action permits nothing more
    text = `${e.defaultText()}\n@id("y") forbid (principal, action, resource) when { resource.name == "pages_create" };`;
    expect(await e.mayPermit('run_without_approval')).toBe(false);
  });

  describe('requests narrowed to what the policy reads', () => {
    const at = (over: Partial<PolicyQuery['context']>, login = 'a', args: Record<string, string> = {}): PolicyQuery => {
      const base = q();
      base.entities[0]!.attrs.login = login;
      base.entities.find((e) => e.uid.type === 'Args')!.tags = args;
      return { ...base, context: { ...base.context, ...over } };
    };

    it('drops what the default policy never reads (the time, the argument names, the login) and keeps what it does', async () => {
      const c = (await import('@cedar-policy/cedar-wasm/nodejs')) as unknown as {
        policySetTextToParts(t: string): { policies: string[] };
        policyToJson(p: string): { json: unknown };
      };
      const reads = readsOf(c.policySetTextToParts(engine.defaultText()).policies.map((p) => c.policyToJson(p).json));
      expect(reads.wholeContext).toBe(false);
      const n = narrowed(at({ arg_names: ['x'], time: { date: '2026-11-27', hour: 1, minute: 2, weekday: 5 } }), reads);
      expect(n.context).toEqual({ approval_mode: 'admin' });
      expect(Object.keys(n.entities[0]!.attrs).sort()).toEqual(['capabilities', 'token']);
      expect(Object.keys(n.entities[1]!.attrs).sort()).toEqual([
        'capability',
        'class',
        'decides_staged',
        'disabled',
        'name',
        'plugin',
      ]);
      // The context compared whole is never narrowed (strict validation already makes such a literal name every key).
      const of = (p: string) => readsOf([c.policyToJson(p).json]);
      expect(
        of('forbid (principal, action, resource) when { context.time.hour == 9 && context has arg_names };')
          .wholeContext,
      ).toBe(false);
      expect(of('forbid (principal, action, resource) when { [context].isEmpty() };').wholeContext).toBe(true);
      // Two calls the default policy cannot tell apart are one request to it (one decision, reused).
      expect(narrowed(at({ arg_names: ['y'] }, 'b', { y: '1' }), reads)).toEqual(
        narrowed(
          at({ arg_names: ['z'], time: { date: '2027-01-01', hour: 23, minute: 59, weekday: 5 } }, 'a', { z: '2' }),
          reads,
        ),
      );
      // A policy reading one tag keeps that tag only, unless the tag it reads is not a literal.
      const path = of('forbid (principal, action, resource) when { context.args.hasTag("path") };');
      const tags = (r: PolicyQuery) => r.entities.find((e) => e.uid.type === 'Args')!.tags;
      expect(tags(narrowed(at({}, 'a', { path: '/x', mode: '1' }), path))).toEqual({ path: '/x' });
      const dynamic = of('forbid (principal, action, resource) when { context.args.hasTag(principal.login) };');
      expect(dynamic.anyTag).toBe(true);
      expect(tags(narrowed(at({}, 'a', { path: '/x', mode: '1' }), dynamic))).toEqual({ path: '/x', mode: '1' });
    });

    it('decides exactly as with the whole request, for policies reading the time, the arguments, the context whole, or an attribute by index', async () => {
      const whole =
        'approval_mode: "admin", arg_names: ["x"], secret_kinds: ["aws"], args: Args::"call", arg_lists: ArgLists::"call", time: { date: "2026-11-26", hour: 9, minute: 0, weekday: 4 }';
      const policies = [
        null,
        '@id("nine") forbid (principal, action, resource) when { context.time.hour == 9 };\npermit (principal, action, resource);',
        '@id("args") forbid (principal, action, resource) when { context.arg_names.contains("secret") };\npermit (principal, action, resource);',
        `@id("exact") forbid (principal, action, resource) when { context == { ${whole} } };\npermit (principal, action, resource);`,
        '@id("login") forbid (principal, action, resource) when { principal["login"] == "b" };\npermit (principal, action, resource);',
        '@id("path") forbid (principal, action, resource) unless { context.args.hasTag("path") && context.args.getTag("path") like "/notes/*" };\npermit (principal, action, resource);',
        '@id("any-tag") forbid (principal, action, resource) when { context.args.hasTag(principal.login) };\npermit (principal, action, resource);',
      ];
      const requests = [
        at({}),
        at({ arg_names: ['secret'] }),
        at({ arg_names: ['x'], secret_kinds: ['aws'] }),
        at({ time: { date: '2026-11-26', hour: 10, minute: 0, weekday: 4 } }),
        at({}, 'b'),
        at({ arg_names: ['other'] }),
        at({ arg_names: ['path'] }, 'a', { path: '/notes/a.md' }),
        at({ arg_names: ['path', 'mode'] }, 'a', { path: '/etc/passwd', mode: '0600' }),
        at({ arg_names: ['a'] }, 'a', { a: 'x' }),
      ];
      const seen = new Set<string>();
      for (const text of policies) {
        const on = createCedarEngine({ activeText: () => text });
        const off = createCedarEngine({ activeText: () => text, narrow: false });
        for (const r of requests) {
          const [a, b] = [await on.decide(r), await off.decide(r)];
          expect(a, `${text} / ${JSON.stringify(r.context)}`).toEqual(b);
          seen.add(`${text}:${a.decision}`);
        }
      }
      // Each policy above both allowed and denied some request (the comparison is not between two "allow"s).
      for (const text of policies.slice(1))
        expect([seen.has(`${text}:allow`), seen.has(`${text}:deny`)]).toEqual([true, true]);
    });
  });
});
