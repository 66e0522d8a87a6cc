import type { Settings } from '../../contract/settings.ts';
import { RESOURCE_READ, UNKNOWN_TOOL } from '../../contract/audit.ts';
import type { EntitlementSource } from '../ports/ports.ts';
import type { Clock } from '../../lib/clock.ts';
import type { CallContext, ReadTool, ResourceDef, ToolOutput, WriteTool } from './tool.ts';
import type { Registry, RegisteredTool } from './registry.ts';
import type { Staging } from '../staging/staging.ts';
import type { Auditor, AuditFacts } from './auditor.ts';
import type { UsageReporter } from './usage.ts';
import { viewerOf } from './registry.ts';
import { actorOf } from './auditor.ts';
import { codeOf, GatehouseError } from '../errors.ts';
import { DEFAULT_CALL_TIMEOUT_MS, withDeadline } from './deadline.ts';
import { USAGE_EVENTS } from './usage.ts';
import { argsShape } from './args-shape.ts';
import { storageMessage, type StorageGuard } from './storage-guard.ts';
import { SurfaceCalls } from './surface-calls.ts';
import type { PolicyGate } from '../policy/policy-gate.ts';
import { runUnattended } from '../staging/unattended.ts';

/** One tools/call under way: its tool, its caller, what its audit entries say. */
interface CallRun {
  entry: RegisteredTool;
  ctx: CallContext;
  facts: Partial<AuditFacts> & Pick<AuditFacts, 'tool' | 'write'>;
  elapsed(): number;
  /** one audit entry: the call's facts, these, and how long it took */
  audit(f: Partial<AuditFacts> & Pick<AuditFacts, 'result'>): void;
  /** one audit entry as given */
  record(f: AuditFacts): void;
}

/** What a tools/call produces before the MCP layer wraps it. */
export type CallOutcome =
  | { kind: 'result'; output: ToolOutput; isError?: false }
  | { kind: 'refused'; code: string; message: string; details: Record<string, unknown> };

export interface PipelineDeps {
  registry: Registry;
  staging: Staging;
  auditor: Auditor;
  entitlements: () => EntitlementSource;
  settings: () => Settings;
  clock: Clock;
  /** required: every call that ran is a usage event */
  usage: UsageReporter;
  /** the time limit of a call whose tool names none */
  timeoutMs?: number;
  /** whether the call's usage event and audit line can be persisted: a call is refused before it runs when not */
  storage?: Pick<StorageGuard, 'ready'>;
  /** the tool-call policy (docs/policy.md); without it, calls the registry lets through run and every write is staged */
  policy?: PolicyGate;
}

/**
 * tools/call: resolve (hidden -> unknown tool) -> validate input -> feature
 * gate -> storage (a call whose usage event or audit line cannot be
 * persisted does not run) -> write? stage : run (under a deadline the tool's signal carries) ->
 * check the result against the output schema -> audit -> usage event. Every
 * step that refuses still writes exactly one audit entry. resources/read goes
 * the same way: the same visibility rule, one audit entry per read.
 */
export class Pipeline {
  private readonly timeoutMs: number;
  /** prompts and passed-through resources of plugin surfaces (an upstream's): the same gating and audit */
  readonly surfaces: SurfaceCalls;

  constructor(private readonly deps: PipelineDeps) {
    this.timeoutMs = deps.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    this.surfaces = new SurfaceCalls(deps);
  }

  async call(name: string, args: unknown, ctx: CallContext): Promise<CallOutcome> {
    const started = this.deps.clock.now();
    const entry = this.resolve(name, ctx, started);
    const run = this.runOf(entry, args, ctx, started);
    const input = await this.checkInput(run, args);
    const gate = this.deps.policy
      ? await this.deps.policy.check(ctx, entry, input, run.facts.target ?? null)
      : { refused: null, unattended: null };
    if (gate.refused) {
      run.audit({ result: 'denied', error_code: gate.refused.code, policy: gate.policies });
      return { kind: 'refused', ...gate.refused };
    }
    const refusal = (await this.entitlementRefusal(run)) ?? (await this.storageRefusal(run));
    if (refusal) return refusal;
    try {
      const tool = entry.tool;
      const output = tool.write
        ? await this.stage(run, tool, input, gate.unattended)
        : await this.runRead(run, tool, input);
      if (output.kind === 'refused') return output;
      this.deps.usage.record({ event: USAGE_EVENTS.toolCalled, product: 'mcp', feature: entry.tool.feature, units: 1 });
      return output;
    } catch (e) {
      const code = codeOf(e);
      run.audit({ result: code === 'forbidden' ? 'denied' : 'error', error_code: code });
      throw e;
    }
  }

  /** The tool the caller may call by this name; a hidden one is an unknown tool, audited under the name asked. */
  private resolve(name: string, ctx: CallContext, started: number): RegisteredTool {
    try {
      return this.deps.registry.resolve(name, viewerOf(ctx), this.deps.settings());
    } catch (e) {
      this.deps.auditor.record(
        {
          tool: name,
          write: false,
          result: 'denied',
          error_code: 'unknown_tool',
          duration_ms: this.deps.clock.now() - started,
        },
        actorOf(ctx),
      );
      throw e;
    }
  }

  private runOf(entry: RegisteredTool, args: unknown, ctx: CallContext, started: number): CallRun {
    const { tool } = entry;
    const actor = actorOf(ctx);
    // An upstream call is audited with the shape of its arguments (names and types, never values).
    const facts: CallRun['facts'] = {
      tool: tool.name,
      write: tool.write,
      source_plugin: tool.plugin,
      feature_key: tool.feature,
      ...(entry.pluginKind === 'upstream' ? { args_shape: argsShape(args ?? {}) } : {}),
      ...viewOf(tool),
    };
    const elapsed = () => this.deps.clock.now() - started;
    return {
      entry,
      ctx,
      facts,
      elapsed,
      audit: (f) => this.deps.auditor.record({ ...facts, ...f, duration_ms: elapsed() }, actor),
      record: (f) => this.deps.auditor.record(f, actor),
    };
  }

  /** The call's arguments as its input schema takes them, or its refusal (audited); from here on entries name its target. */
  private async checkInput(run: CallRun, args: unknown): Promise<Record<string, unknown>> {
    const { tool } = run.entry;
    const resume = run.ctx.resume;
    // A retried round whose requestState was issued for another call: refused (and audited) before anything runs.
    if (resume?.refused) {
      run.audit({ result: 'denied', error_code: 'invalid_params', reason: resume.refused.reason });
      throw new GatehouseError('invalid_params', resume.refused.message);
    }
    const checked = await run.entry.input.validate(args ?? {});
    if (!checked.ok) {
      run.audit({ result: 'error', error_code: 'invalid_params' });
      throw new GatehouseError('invalid_params', `invalid arguments for ${tool.name}: ${checked.issues.join('; ')}`, {
        issues: checked.issues,
      });
    }
    const input = checked.value as Record<string, unknown>;
    // From here on every entry names what the call names (a page read, a write refused on a named page).
    Object.assign(run.facts, { target: targetOf(tool, input) });
    return input;
  }

  /** The feature gate: the plan the tool needs, or the product or license state that switches it off. */
  private async entitlementRefusal(run: CallRun): Promise<CallOutcome | null> {
    const { tool } = run.entry;
    const source = this.deps.entitlements();
    const { entitlement, code } = source.decide
      ? await source.decide(tool.feature)
      : { entitlement: await source.check(tool.feature), code: null };
    if (entitlement.allowed) return null;
    const refusal = refusalOf(code, tool.name, tool.feature, entitlement.plan);
    run.audit({ result: 'denied', error_code: refusal.code });
    return { kind: 'refused', ...refusal, details: { feature: tool.feature, required_plan: entitlement.plan } };
  }

  /** A call whose usage event or audit line cannot be persisted does not run. */
  private async storageRefusal(run: CallRun): Promise<CallOutcome | null> {
    const fault = await this.deps.storage?.ready();
    if (!fault) return null;
    run.audit({ result: 'denied', error_code: 'storage_unavailable' });
    return {
      kind: 'refused',
      code: 'storage_unavailable',
      message: storageMessage(fault),
      details: { part: fault.part, since: fault.since },
    };
  }

  /** A write: staged for approval (its preview under the deadline), or run at once when the policy lets it run unattended. */
  private async stage(
    run: CallRun,
    tool: WriteTool,
    input: Record<string, unknown>,
    unattended: Parameters<typeof runUnattended>[3] | null,
  ): Promise<CallOutcome> {
    const limit = tool.timeout_ms ?? this.timeoutMs;
    const { facts, ctx } = run;
    // Only the preview runs under the deadline: once it is done, staging it is quick and must not be cut in half.
    const timed: WriteTool = {
      ...tool,
      preview: (i, c) =>
        withDeadline((signal) => tool.preview(i, { ...c, signal }), limit, c.signal, `${tool.name} (preview)`),
    };
    const staged = await this.deps.staging.stage(timed, input, ctx, {
      ...(facts.args_shape ? { args_shape: facts.args_shape } : {}),
      ...(facts.view ? { view: facts.view } : {}),
    });
    if (unattended) {
      const done = await runUnattended(this.deps, staged.staged_id, ctx, unattended);
      return done.kind === 'refused' ? done : { kind: 'result', output: done.output };
    }
    const agentMayConfirm = this.deps.settings().approval_mode === 'agent';
    return {
      kind: 'result',
      output: {
        structured: staged,
        text: stagedText(staged.staged_id, staged.preview.summary, staged.expires_at, agentMayConfirm),
      },
    };
  }

  /** A read: run under the deadline, its result checked against the output schema, audited. */
  private async runRead(run: CallRun, tool: ReadTool, input: Record<string, unknown>): Promise<CallOutcome> {
    const { entry, ctx, facts } = run;
    const limit = tool.timeout_ms ?? this.timeoutMs;
    const output = await withDeadline((signal) => tool.run(input, { ...ctx, signal }), limit, ctx.signal, tool.name);
    // An input-required answer is no result yet: there is nothing to check against the output schema.
    // Nor is an error result the source sent as one: it is passed on as it came, and audited as the error it is.
    if (entry.output && !output.inputRequired && !output.error) await checkOutput(entry, output);
    run.record({
      ...facts,
      ...(output.error ? { result: 'error', error_code: output.error.code } : { result: 'ok' }),
      duration_ms: run.elapsed(),
      ...(output.asked ? { asked: output.asked } : {}),
    });
    return { kind: 'result', output };
  }

  /**
   * resources/read of a plugin resource: visible under the same rule as its
   * tool (a hidden one answers like a missing one), audited as RESOURCE_READ
   * with the URI as target. `extra` are resources the caller may always read
   * (the operating manual), audited the same way.
   */
  /**
   * A retried round of `name` whose requestState the MCP layer refused before
   * the call could run (forged, expired, another token's): audited like the
   * pipeline's own refusals, principal = the token, with the reason (never the state).
   */
  auditRefusedState(name: string, ctx: CallContext, reason: string): void {
    let tool: RegisteredTool['tool'] | null = null;
    try {
      tool = this.deps.registry.resolve(name, viewerOf(ctx), this.deps.settings()).tool;
    } catch {
      // a name the caller cannot call: counted under UNKNOWN_TOOL, never the name it made up
    }
    const facts = tool
      ? { tool: tool.name, write: tool.write, source_plugin: tool.plugin, feature_key: tool.feature }
      : { tool: UNKNOWN_TOOL, write: false };
    this.deps.auditor.record({ ...facts, result: 'denied', error_code: 'invalid_params', reason }, actorOf(ctx));
  }

  async readResource(
    uri: string,
    ctx: CallContext,
    extra: readonly ResourceDef[] = [],
  ): Promise<{ resource: ResourceDef; text: string }> {
    const { auditor, clock } = this.deps;
    const started = clock.now();
    const audit = (f: Partial<AuditFacts> & Pick<AuditFacts, 'result'>) =>
      auditor.record(
        { tool: RESOURCE_READ, write: false, target: uri, duration_ms: clock.now() - started, ...f },
        actorOf(ctx),
      );
    const resource =
      extra.find((r) => r.uri === uri) ??
      this.deps.registry.resources(viewerOf(ctx), this.deps.settings()).find((r) => r.uri === uri);
    if (!resource) {
      audit({ result: 'denied', error_code: 'not_found' });
      throw new GatehouseError('not_found', `resource not found: ${uri.slice(0, 300)}`, { uri: uri.slice(0, 300) });
    }
    const source = { source_plugin: resource.plugin ?? null };
    try {
      const text = await withDeadline(
        (signal) => resource.read({ ...ctx, signal }),
        this.timeoutMs,
        ctx.signal,
        `reading ${uri}`,
      );
      audit({ result: 'ok', ...source });
      return { resource, text };
    } catch (e) {
      audit({ result: 'error', error_code: codeOf(e), ...source });
      throw e;
    }
  }
}

/** The target a call names; a tool's own function failing on odd input names none rather than failing the call. */
export function targetOf(tool: RegisteredTool['tool'], input: Record<string, unknown>): string | null {
  try {
    return tool.target?.(input) ?? null;
  } catch {
    return null;
  }
}

async function checkOutput(entry: RegisteredTool, output: ToolOutput): Promise<void> {
  const v = await entry.output!.validate(output.structured);
  if (v.ok) return;
  const code = entry.pluginKind === 'upstream' ? 'upstream_error' : 'internal_error';
  throw new GatehouseError(
    code,
    `the result of ${entry.tool.name} does not match its output schema: ${v.issues.slice(0, 5).join('; ')}`,
  );
}

function stagedText(id: string, summary: string, expiresAt: string, agentMayConfirm: boolean): string {
  const decide = agentMayConfirm
    ? `Check the preview, then confirm it with staged_writes_confirm or drop it with staged_writes_discard (a person may also decide in Gatehouse) before ${expiresAt}.`
    : `A person approves or discards it in Gatehouse before ${expiresAt}.`;
  return `Staged for approval (nothing has changed yet): ${summary}\nstaged_id: ${id}\n${decide} Check with staged_writes_status.`;
}

/** What the agent reads when the gate refuses: the precise reason when the certificate gives one. */
function refusalOf(
  code: string | null,
  tool: string,
  feature: string,
  plan: string,
): { code: 'entitlement_required' | 'product_inactive' | 'license_expired' | 'license_invalid'; message: string } {
  const product = feature.slice(0, feature.indexOf('.'));
  if (code === 'product_inactive')
    return {
      code,
      message: `${tool} is switched off: the '${product}' product is not active for this site on the cloud gateway; its operator can enable it`,
    };
  if (code === 'license_expired')
    return {
      code,
      message: `${tool} needs the '${plan}' plan (feature ${feature}) and this site's license has expired; renew it, then run gatehouse cloud sync`,
    };
  if (code === 'license_invalid')
    return {
      code,
      message: `${tool} needs the '${plan}' plan (feature ${feature}) and this site's license is no longer valid (revoked or suspended); activate another license (gatehouse cloud activate)`,
    };
  return {
    code: 'entitlement_required',
    message: `${tool} needs the '${plan}' plan (feature ${feature}); upgrade the license in Gatehouse to use it`,
  };
}

/** An MCP App's tool names its view in its listed `_meta.ui`: the audit names it too (docs/upstreams.md, "MCP Apps"). */
function viewOf(tool: RegisteredTool['tool']): Pick<AuditFacts, 'view'> {
  const ui = tool.listed?._meta?.ui as { resourceUri?: unknown; visibility?: unknown } | undefined;
  if (typeof ui?.resourceUri !== 'string') return {};
  const only = Array.isArray(ui.visibility) && ui.visibility.includes('app') && !ui.visibility.includes('model');
  return { view: { uri: ui.resourceUri, only } };
}
