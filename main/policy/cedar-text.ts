import type * as CedarWasm from '@cedar-policy/cedar-wasm/nodejs';
import { GatehouseError } from '../core/errors.ts';
import { checkNesting } from './cedar-nesting.ts';

type Cedar = typeof CedarWasm;

const POLICY_ID = /^[A-Za-z0-9_.:-]{1,100}$/;
const MAX_POLICIES = 1000;

/**
 * A policy text as Cedar's `{id: policy}` map: each statement's `@id("...")`
 * names it (else policy0, policy1, ... in the order Cedar lists them), so a
 * refusal can name the policy a person wrote. Templates are not used here.
 */
export function splitPolicies(c: Cedar, text: string): Record<string, string> {
  checkNesting(text);
  const parts = c.policySetTextToParts(text);
  if (parts.type !== 'success')
    throw new GatehouseError('invalid_value', `the policy does not parse: ${describe(parts.errors)}`);
  if (parts.policy_templates.length)
    throw new GatehouseError(
      'invalid_value',
      'policy templates (?principal / ?resource slots) are not supported: write each policy out',
    );
  if (parts.policies.length > MAX_POLICIES)
    throw new GatehouseError('invalid_value', `a policy holds at most ${MAX_POLICIES} statements`);
  const set = Object.create(null) as Record<string, string>;
  parts.policies.forEach((p, i) => {
    const json = c.policyToJson(p);
    const named = json.type === 'success' ? json.json.annotations?.id : undefined;
    const id = named ?? `policy${i}`;
    if (!POLICY_ID.test(id))
      throw new GatehouseError(
        'invalid_value',
        `policy id ${JSON.stringify(id.slice(0, 100))} must be 1-100 of A-Z a-z 0-9 _ . : -`,
      );
    if (id in set)
      throw new GatehouseError('invalid_value', `two policies share the id '${id}': each @id must be unique`);
    set[id] = p;
  });
  if (!parts.policies.length)
    throw new GatehouseError('invalid_value', 'the policy holds no statement: with none, every call would be refused');
  return set;
}

/** The validator's findings in one message, or null when there are none. */
export function validationMessage(v: CedarWasm.ValidationAnswer): string | null {
  if (v.type === 'failure') return `the policy does not parse: ${describe(v.errors)}`;
  if (!v.validationErrors.length) return null;
  const first = v.validationErrors
    .slice(0, 5)
    .map((e) => `${e.error.message}${e.error.help ? ` (${e.error.help})` : ''}`);
  return `the policy does not validate against the schema: ${first.join('; ')}${v.validationErrors.length > 5 ? `; and ${v.validationErrors.length - 5} more` : ''}`;
}

function describe(errors: CedarWasm.DetailedError[]): string {
  return errors
    .slice(0, 5)
    .map((e) => `${e.message}${e.help ? ` (${e.help})` : ''}`)
    .join('; ')
    .slice(0, 2000);
}
