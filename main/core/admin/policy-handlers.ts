import type { PolicyExplainAnswer, PolicyView } from '../../contract/policy.ts';
import type { Settings } from '../../contract/settings.ts';
import type { ActionDeps, Handler } from './action-types.ts';
import type { PolicyVerdict } from '../policy/policy.ts';
import type { PolicyActions } from '../policy/policy-gate.ts';
import { capabilitiesOf } from '../identity/users.ts';
import { contextForPeople, refusalMessage } from '../policy/policy.ts';
import { GatehouseError } from '../errors.ts';
import { targetOf } from '../calls/pipeline.ts';

type Deps = Pick<ActionDeps, 'tokens' | 'registry' | 'settings' | 'clock'> & { policy?: PolicyActions };

/**
 * `policy.get | check | set | explain` (people only, checked by invoke). A
 * policy that does not parse or validate is refused with the validator's
 * message before anything is written, so the old one stays.
 */
export function createPolicyHandlers(deps: Deps): {
  'policy.get': Handler<'policy.get'>;
  'policy.check': Handler<'policy.check'>;
  'policy.set': Handler<'policy.set'>;
  'policy.explain': Handler<'policy.explain'>;
} {
  const need = (): PolicyActions => {
    if (!deps.policy) throw new GatehouseError('service_unavailable', 'no policy engine is configured here');
    return deps.policy;
  };
  const view = async (p: PolicyActions): Promise<PolicyView> => {
    const stored = p.stored();
    const text = stored?.text ?? p.engine.defaultText();
    // A stored policy that no longer validates (a newer schema, a hand edit) is still shown, so a person can fix it.
    const checked = await p.engine.check(text).then(
      (c) => ({ policies: c.policies, problem: null }),
      (e: Error) => ({
        policies: [],
        problem: `this policy cannot be used (${e.message.slice(0, 300)}): every tool call is refused (policy_unavailable) until a valid one is saved`,
      }),
    );
    return {
      source: stored ? 'custom' : 'default',
      text,
      updated: stored?.updated ?? null,
      ...checked,
      schema: p.engine.schemaText(),
    };
  };
  return {
    'policy.get': async () => view(need()),
    'policy.check': async (input) => need().engine.check(input.text),
    'policy.set': async (input) => {
      const p = need();
      await p.engine.check(input.text);
      await p.save({ text: input.text, updated: new Date(deps.clock.now()).toISOString() });
      return view(p);
    },
    'policy.explain': async (input) => explain(need(), deps, input),
  };
}

async function explain(
  p: PolicyActions,
  deps: Deps,
  input: { token_id: string; tool: string; args?: Record<string, unknown> },
): Promise<PolicyExplainAnswer> {
  const found = deps.tokens.byId(input.token_id);
  if (!found)
    throw new GatehouseError(
      'not_found',
      `no token with id '${input.token_id.slice(0, 64)}' (see: gatehouse tokens list)`,
    );
  const { record, user } = found;
  const settings: Settings = deps.settings.get();
  const caller = {
    user,
    capabilities: capabilitiesOf(user.role),
    token: record,
    client: deps.tokens.lastClient(record.id),
  };
  const entry = deps.registry.entry(input.tool);
  const base = { token_id: record.id, tool: input.tool };
  const none = { call: null, run_without_approval: null, context: {} };
  if (
    !entry ||
    !deps.registry.isVisible(entry.tool, { capabilities: caller.capabilities, scope: record.scope }, settings)
  ) {
    const why = entry
      ? `${input.tool} is hidden from this token (its user's role, the token's narrowing or profile, or disabled_tools): it answers as an unknown tool`
      : `there is no tool '${input.tool.slice(0, 128)}'`;
    return { ...base, ...none, outcome: 'unknown_tool', summary: why };
  }
  const args = input.args ?? {};
  const checked = await entry.input.validate(args);
  if (!checked.ok)
    return {
      ...base,
      ...none,
      outcome: 'invalid_params',
      summary: `the arguments do not fit ${input.tool}'s input schema: ${checked.issues.slice(0, 3).join('; ')}`,
    };
  const value = checked.value as Record<string, unknown>;
  const target = targetOf(entry.tool, value);
  const call = await p.gate.decide('call', caller, entry, value, target);
  const run =
    entry.tool.write && call.decision === 'allow'
      ? await p.gate.decide('run_without_approval', caller, entry, value, target)
      : null;
  const context = contextForPeople(p.gate.queryFor('call', caller, entry, value, target));
  const outcome =
    call.decision === 'deny'
      ? 'refused'
      : !entry.tool.write
        ? 'runs'
        : run?.decision === 'allow'
          ? 'runs_without_approval'
          : 'staged';
  return {
    ...base,
    call,
    run_without_approval: run,
    context,
    outcome,
    summary: summaryOf(input.tool, outcome, call, run),
  };
}

function summaryOf(
  tool: string,
  outcome: PolicyExplainAnswer['outcome'],
  call: PolicyVerdict,
  run: PolicyVerdict | null,
): string {
  const ids = (v: PolicyVerdict) => v.policies.map((x) => `'${x}'`).join(', ');
  if (outcome === 'refused') return `${refusalMessage(tool, 'call', call)}: the call is refused (policy_denied)`;
  const permitted = `permitted by ${ids(call) || 'no policy'}`;
  if (outcome === 'runs') return `${tool} runs (${permitted})`;
  if (outcome === 'runs_without_approval')
    return `${tool} runs without a person's approval (${permitted}; run_without_approval permitted by ${ids(run!)})`;
  const why =
    run && run.policies.length
      ? `run_without_approval forbidden by ${ids(run)}`
      : 'no policy permits run_without_approval';
  return `${tool} is staged for approval (${permitted}; ${why})`;
}
