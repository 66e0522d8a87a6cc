import type { Settings } from '../contract/settings.ts';
import type { Clock, EntitlementSource, UsageSink } from './ports.ts';
import type { CallContext, Tool, ToolOutput } from './tool.ts';
import type { Registry } from './registry.ts';
import type { Staging } from './staging.ts';
import type { Auditor } from './auditor.ts';
import { viewerOf } from './registry.ts';
import { actorOf } from './auditor.ts';
import { GatehouseError } from './errors.ts';

/** What a tools/call produces before the MCP layer wraps it. */
export type CallOutcome =
  | { kind: 'result'; output: ToolOutput; isError?: false }
  | { kind: 'refused'; code: string; message: string; details: Record<string, unknown> };

/**
 * tools/call: resolve (hidden -> unknown tool) -> validate input -> feature
 * gate -> write? stage : run -> audit -> usage event. Every step that refuses
 * still writes exactly one audit entry.
 */
export class Pipeline {
  constructor(
    private readonly registry: Registry,
    private readonly staging: Staging,
    private readonly auditor: Auditor,
    private readonly entitlements: () => EntitlementSource,
    private readonly settings: () => Settings,
    private readonly clock: Clock,
    private readonly usage?: UsageSink,
  ) {}

  async call(name: string, args: unknown, ctx: CallContext): Promise<CallOutcome> {
    const started = this.clock.now();
    const actor = actorOf(ctx);
    const elapsed = () => this.clock.now() - started;
    let tool: Tool;
    try {
      tool = this.registry.resolve(name, viewerOf(ctx), this.settings());
    } catch (e) {
      this.auditor.record({ tool: name, write: false, result: 'denied', error_code: 'unknown_tool', duration_ms: elapsed() }, actor);
      throw e;
    }
    const facts = { tool: tool.name, write: tool.write, source_plugin: tool.plugin, feature_key: tool.feature };

    const parsed = tool.input.safeParse(args ?? {});
    if (!parsed.success) {
      this.auditor.record({ ...facts, result: 'error', error_code: 'invalid_params', duration_ms: elapsed() }, actor);
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`);
      throw new GatehouseError('invalid_params', `invalid arguments for ${tool.name}: ${issues.join('; ')}`, { issues });
    }

    const entitlement = await this.entitlements().check(tool.feature);
    if (!entitlement.allowed) {
      this.auditor.record({ ...facts, result: 'denied', error_code: 'entitlement_required', duration_ms: elapsed() }, actor);
      return {
        kind: 'refused',
        code: 'entitlement_required',
        message: `${tool.name} needs the '${entitlement.plan}' plan (feature ${tool.feature}); upgrade the license in Gatehouse to use it`,
        details: { feature: tool.feature, required_plan: entitlement.plan },
      };
    }

    try {
      if (tool.write) {
        const staged = await this.staging.stage(tool, parsed.data, ctx);
        return { kind: 'result', output: { structured: staged, text: stagedText(staged.staged_id, staged.preview.summary, staged.expires_at) } };
      }
      const output = await tool.run(parsed.data, ctx);
      this.auditor.record({ ...facts, result: 'ok', duration_ms: elapsed() }, actor);
      this.usage?.record({ event: 'mcp.tool.called', product: 'mcp', feature: tool.feature, model: '', units: 1, tokens_input: 0, tokens_output: 0 });
      return { kind: 'result', output };
    } catch (e) {
      const code = e instanceof GatehouseError ? e.code : 'internal_error';
      this.auditor.record({ ...facts, result: code === 'forbidden' ? 'denied' : 'error', error_code: code, duration_ms: elapsed() }, actor);
      throw e;
    }
  }
}

function stagedText(id: string, summary: string, expiresAt: string): string {
  return `Staged for approval (nothing has changed yet): ${summary}\nstaged_id: ${id}\nA person approves or discards it in Gatehouse before ${expiresAt}; check with staged_writes_status.`;
}
