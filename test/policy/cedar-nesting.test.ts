import { describe, expect, it } from 'vitest';
import { toolQuery } from './policy-query.ts';
import { createCedarEngine } from '../../main/policy/cedar-engine.ts';
import { MAX_IFS_PER_STATEMENT, MAX_POLICY_NESTING } from '../../main/policy/cedar-nesting.ts';

/**
 * A deeply nested policy: Cedar's parser overflows its WASM stack at about 150 nested
 * brackets, and the overflow breaks the module for every later decision. The text is measured first.
 */
const when = (cond: string) => `@id("deep") permit (principal, action == Action::"call", resource) when { ${cond} };`;
const parens = (n: number) => '('.repeat(n) + 'true' + ')'.repeat(n);
const ifs = (n: number) => 'if true then '.repeat(n) + 'true' + ' else true'.repeat(n);

const query = toolQuery('pages_list');

describe('policy nesting bound', () => {
  it('refuses brackets nested past the bound with the line, and the engine keeps deciding afterwards', async () => {
    let active: string | null = null;
    const engine = createCedarEngine({ activeText: () => active });
    for (const n of [MAX_POLICY_NESTING + 1, 150, 5000]) {
      await expect(engine.check(`// a comment\n${when(parens(n))}`)).rejects.toMatchObject({
        code: 'invalid_value',
        message: expect.stringMatching(/nests brackets more than 32 deep \(line 2\)/),
      });
      await expect(engine.check(when(`[${'['.repeat(n)}${']'.repeat(n)}] == []`))).rejects.toMatchObject({
        code: 'invalid_value',
      });
    }
    await expect(engine.check(when(ifs(MAX_IFS_PER_STATEMENT + 1)))).rejects.toMatchObject({
      code: 'invalid_value',
      message: expect.stringContaining('if-expressions'),
    });
    // What the bound lets through parses, validates and decides.
    active = when(`${parens(MAX_POLICY_NESTING - 2)} && (${ifs(MAX_IFS_PER_STATEMENT)})`);
    expect(await engine.check(active)).toEqual({ policies: ['deep'] });
    expect((await engine.decide(query)).decision).toBe('allow');
  });

  it('counts only the brackets and ifs of the policy, not those in strings or comments', async () => {
    const engine = createCedarEngine({ activeText: () => null });
    const text = `// ${'('.repeat(200)} if if if\n${when(`principal.login != "${'(['.repeat(200)}\\" if"`)}`;
    expect(await engine.check(text)).toEqual({ policies: ['deep'] });
  });
});
