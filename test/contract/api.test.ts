import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { API_ACTIONS } from '../../main/contract/api.ts';

type Def = { type: string; innerType?: z.ZodType; in?: z.ZodType; catchall?: z.ZodType };
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** The object schema under optional/default/pipe wrappers. */
function objectOf(schema: z.ZodType): Def {
  let def = defOf(schema);
  while (['default', 'optional', 'nullable', 'prefault', 'readonly', 'pipe'].includes(def.type)) {
    def = defOf((def.innerType ?? def.in)!);
  }
  return def;
}

describe('the admin API actions', () => {
  // A field the action does not know is a caller's mistake (`{"read_only": true}` at the top level of
  // tokens.create once made a full token): every action refuses it instead of ignoring it.
  it.each(Object.keys(API_ACTIONS))('%s takes an object input that refuses unknown fields', (name) => {
    const input = (API_ACTIONS as Record<string, { input: z.ZodType }>)[name]!.input;
    const def = objectOf(input);
    expect(def.type).toBe('object');
    expect(def.catchall && defOf(def.catchall).type).toBe('never');
  });

  it('tokens.create refuses a narrowing put beside scope instead of making a full token', () => {
    const r = API_ACTIONS['tokens.create'].input.safeParse({ label: 'agent', read_only: true });
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toContain('read_only');
  });
});
