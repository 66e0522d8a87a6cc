import type { StagedPayload } from '../../contract/staged.ts';
import type { TokenRecord } from '../../contract/tokens.ts';
import type { User } from '../../contract/users.ts';
import type { PolicyCaller } from '../policy/policy.ts';
import type { PolicyGate } from '../policy/policy-gate.ts';
import type { Registry } from '../calls/registry.ts';
import type { Decider } from './staging-parts.ts';
import { capabilitiesOf } from '../identity/users.ts';

/**
 * The tool-call policy asked again when a staged write is confirmed
 * (docs/policy.md, "Confirming a staged write"): a policy that forbids the
 * tool's `call` now refuses the confirm, whoever decides. The question is
 * the call the write would make now: its tool, the staged call's argument
 * names and secret kinds (`call_shape`), its target; the principal is the deciding agent (its own
 * token), or, for a person, the token and user that staged it.
 */
export type ConfirmPolicy = (item: StagedPayload, by: Decider | typeof A_PERSON) => Promise<ConfirmRefusal | null>;

/** The desk's question, before anyone decides: would a person's confirm be refused by the policy now? */
export const A_PERSON = 'a person' as const;

export interface ConfirmRefusal {
  code: 'policy_denied' | 'policy_unavailable';
  message: string;
  policies: string[];
}

export interface ConfirmPolicyDeps {
  gate: Pick<PolicyGate, 'mayCall'>;
  registry: Pick<Registry, 'entry'>;
  token: (id: string) => { record: TokenRecord; user: User } | null;
  users: (id: string) => User | undefined;
}

export function confirmPolicyOf(deps: ConfirmPolicyDeps): ConfirmPolicy {
  return async (item, by) => {
    // A write the policy let run without a person was asked both questions in the very call that staged it.
    const agent = by !== A_PERSON && by.kind === 'agent' ? by : null;
    if (agent?.policy) return null;
    const entry = deps.registry.entry(item.tool);
    const caller = agent ? agent.ctx : stagerOf(item, deps);
    // No tool (gone) or no owner: the confirm's own checks refuse it with their precise reasons.
    if (!entry || !caller) return null;
    // The call's own argument names when the record kept them (an older record: the payload's).
    const answer = await deps.gate.mayCall(caller, entry, item.payload, item.target, item.call_shape);
    return answer ? { code: answer.refused.code, message: answer.refused.message, policies: answer.policies } : null;
  };
}

function stagerOf(item: StagedPayload, deps: ConfirmPolicyDeps): PolicyCaller | null {
  const found = item.token_id ? deps.token(item.token_id) : null;
  const user = found?.user ?? deps.users(item.user_id);
  if (!user) return null;
  return { user, capabilities: capabilitiesOf(user.role), token: found?.record ?? null, client: item.client };
}
