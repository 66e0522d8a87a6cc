import type { Settings } from '../../contract/settings.ts';
import type { StoredPolicy } from '../../contract/policy.ts';
import type { Clock } from '../../lib/clock.ts';
import type { RegisteredTool, ProfileSet } from '../calls/registry.ts';
import type { PolicyAction, PolicyCaller, PolicyEngine, PolicyQuery, PolicyVerdict } from './policy.ts';
import { callShapeOf, policyQuery, refusalMessage, surfaceQuery, type CallShape, type SurfaceFacts } from './policy.ts';
import { GatehouseError } from '../errors.ts';

export interface PolicyGateDeps {
  engine: PolicyEngine;
  settings: () => Settings;
  profileOf: (name: string) => ProfileSet | undefined;
  clock: Clock;
}

/** What the policy says of one call: refused (with the policies that refused it), or allowed, and for a write whether it may run without a person. */
export type GateAnswer =
  | {
      refused: { code: 'policy_denied' | 'policy_unavailable'; message: string; details: Record<string, unknown> };
      policies: string[];
    }
  | { refused: null; unattended: string[] | null };

/**
 * The pipeline's question to the tool-call policy (docs/policy.md), after
 * the registry's visibility rule and input validation: may this call run
 * (`call`), and may this write run without a person (`run_without_approval`)?
 * An engine that cannot answer refuses the call: never let through.
 */
export class PolicyGate {
  constructor(private readonly deps: PolicyGateDeps) {}

  queryFor(
    action: PolicyAction,
    caller: PolicyCaller,
    entry: RegisteredTool,
    args: unknown,
    target: string | null,
    shape?: CallShape,
  ): PolicyQuery {
    const facts = { settings: this.deps.settings(), profileOf: this.deps.profileOf, now: this.deps.clock.now() };
    return policyQuery(
      action,
      caller,
      entry.tool,
      entry.pluginKind,
      { args, target, ...(shape ? { shape } : {}) },
      facts,
    );
  }

  async decide(
    action: PolicyAction,
    caller: PolicyCaller,
    entry: RegisteredTool,
    args: unknown,
    target: string | null,
    shape?: CallShape,
  ): Promise<PolicyVerdict> {
    return this.deps.engine.decide(this.queryFor(action, caller, entry, args, target, shape));
  }

  async check(caller: PolicyCaller, entry: RegisteredTool, args: unknown, target: string | null): Promise<GateAnswer> {
    // The arguments are scanned once for both questions.
    const shape = callShapeOf(args);
    try {
      const call = await this.decide('call', caller, entry, args, target, shape);
      if (call.decision === 'deny') return callRefusal(entry, call);
      if (!entry.tool.write) return { refused: null, unattended: null };
      // Most policies (the default among them) permit no write without a person: no need to ask, at ~0.3 ms a question.
      if (!(await this.deps.engine.mayPermit('run_without_approval'))) return { refused: null, unattended: null };
      const run = await this.decide('run_without_approval', caller, entry, args, target, shape);
      return { refused: null, unattended: run.decision === 'allow' ? run.policies : null };
    } catch (e) {
      return unavailable(e);
    }
  }

  /**
   * prompts/get and resources/read of a plugin surface: the refusal, or null when the policy permits it.
   * Asked after the registry's visibility rule (a hidden prompt or URI answers not_found before this).
   */
  async maySurface(
    what: { action: 'get_prompt'; name: string } | { action: 'read_resource'; uri: string },
    caller: PolicyCaller,
    surface: SurfaceFacts,
    args: Record<string, unknown>,
  ): Promise<Extract<GateAnswer, { refused: object }> | null> {
    const facts = { settings: this.deps.settings(), profileOf: this.deps.profileOf, now: this.deps.clock.now() };
    try {
      const verdict = await this.deps.engine.decide(surfaceQuery(what, caller, surface, args, facts));
      if (verdict.decision === 'allow') return null;
      const name = what.action === 'get_prompt' ? what.name : what.uri;
      return {
        refused: {
          code: 'policy_denied',
          message: refusalMessage(name.slice(0, 300), what.action, verdict),
          details: { action: what.action, policies: verdict.policies },
        },
        policies: verdict.policies,
      };
    } catch (e) {
      return unavailable(e);
    }
  }

  /**
   * tools/list (policy-listing.ts): whether the policy may permit some call of this tool by this caller. False only
   * when it refuses the tool whatever the call's arguments, target and time; an engine that cannot answer lists it
   * (the registry's rule shows it), and the call itself is refused with `policy_unavailable`.
   */
  async mayList(caller: PolicyCaller, entry: RegisteredTool): Promise<boolean> {
    try {
      return await this.deps.engine.mayList(this.queryFor('call', caller, entry, {}, null));
    } catch (e) {
      if (e instanceof GatehouseError && e.code === 'policy_unavailable') return true;
      throw e;
    }
  }

  /** What a decision reads beyond the caller and the tool: the settings it is given and the caller's profile (policy.ts). */
  factsOf(caller: PolicyCaller): unknown {
    const s = this.deps.settings();
    const profile = caller.token?.scope.profile;
    return [s.approval_mode, s.disabled_tools, profile === undefined ? null : (this.deps.profileOf(profile) ?? null)];
  }

  /** `call` alone, for the confirm of a staged write (staged-policy.ts): the refusal, or null when the policy permits the call now. */
  async mayCall(
    caller: PolicyCaller,
    entry: RegisteredTool,
    args: unknown,
    target: string | null,
    shape?: CallShape,
  ): Promise<Extract<GateAnswer, { refused: object }> | null> {
    try {
      const call = await this.decide('call', caller, entry, args, target, shape);
      return call.decision === 'deny' ? callRefusal(entry, call) : null;
    } catch (e) {
      return unavailable(e);
    }
  }
}

const callRefusal = (entry: RegisteredTool, call: PolicyVerdict): Extract<GateAnswer, { refused: object }> => ({
  refused: {
    code: 'policy_denied',
    message: refusalMessage(entry.tool.name, 'call', call),
    details: { action: 'call', policies: call.policies },
  },
  policies: call.policies,
});

/** An engine that cannot answer refuses: never let through. Anything else is a bug and propagates. */
function unavailable(e: unknown): Extract<GateAnswer, { refused: object }> {
  if (e instanceof GatehouseError && e.code === 'policy_unavailable')
    return { refused: { code: e.code, message: e.message, details: {} }, policies: [] };
  throw e;
}

/** What the policy actions need beyond the other handlers' deps: the engine, the gate and where the person's policy is kept. */
export interface PolicyActions {
  engine: PolicyEngine;
  gate: PolicyGate;
  stored(): StoredPolicy | null;
  /** writes the policy atomically (one options.json update); null goes back to the shipped default */
  save(policy: StoredPolicy | null): Promise<void>;
}
