import type { Settings } from '../../contract/settings.ts';
import { PROMPT_GET, RESOURCE_READ } from '../../contract/audit.ts';
import type { Clock } from '../../lib/clock.ts';
import type { EntitlementSource } from '../ports/ports.ts';
import type { Auditor, AuditFacts } from './auditor.ts';
import type { Registry } from './registry.ts';
import type { CallContext, Plugin, PluginSurface } from './tool.ts';
import type { CompletionRequest, ListedPrompt, ListedResource, ListedTemplate, SurfaceOffers } from './surface.ts';
import { actorOf } from './auditor.ts';
import { viewerOf } from './registry.ts';
import { codeOf, GatehouseError } from '../errors.ts';
import { withDeadline, DEFAULT_CALL_TIMEOUT_MS } from './deadline.ts';
import type { PolicyGate } from '../policy/policy-gate.ts';

export interface SurfaceCallsDeps {
  registry: Registry;
  auditor: Auditor;
  entitlements: () => EntitlementSource;
  settings: () => Settings;
  clock: Clock;
  timeoutMs?: number;
  /** the policy (docs/policy.md): `get_prompt` and `read_resource`; without it, what the registry shows may be used */
  policy?: PolicyGate;
}

type Seen = { plugin: string; kind: Plugin['kind']; surface: PluginSurface };

/**
 * prompts/list|get and the passed-through part of resources/list|read and
 * resources/templates/list (plugin surfaces: an upstream's prompts and
 * resources). What a caller sees is Registry.surfaces; a prompt or URI it
 * does not see answers `not_found`, like one that does not exist. Every get
 * and read is decided by the policy (`get_prompt`, `read_resource`), gated
 * on the surface's feature and audited once, with the plugin as source_plugin.
 */
export class SurfaceCalls {
  /** `plugin`: only that plugin's surface is seen (an upstream's own endpoint); any other answers not_found. */
  constructor(
    private readonly deps: SurfaceCallsDeps,
    private readonly plugin?: string,
  ) {}

  /** The same calls seeing one plugin's surface only: its prompts and resources list, any other's read answers not_found, audited alike. */
  only(plugin: string): SurfaceCalls {
    return new SurfaceCalls(this.deps, plugin);
  }

  prompts(ctx: CallContext): ListedPrompt[] {
    return this.seen(ctx).flatMap((s) => [...s.surface.prompts()]);
  }

  resources(ctx: CallContext): ListedResource[] {
    return this.seen(ctx).flatMap((s) => [...s.surface.resources()]);
  }

  templates(ctx: CallContext): ListedTemplate[] {
    return this.seen(ctx).flatMap((s) => [...s.surface.templates()]);
  }

  /** Whether a resources/read of this URI is a surface's (seen by the caller or not: a hidden one must answer not_found here, not fall through). */
  ownsUri(uri: string): boolean {
    return this.deps.registry.listPlugins().some((p) => p.surface?.ownsUri(uri));
  }

  async getPrompt(name: string, args: Record<string, string>, ctx: CallContext): Promise<Record<string, unknown>> {
    const s = this.seen(ctx).find((x) => x.surface.ownsPrompt(name));
    return this.run(
      { tool: PROMPT_GET, target: name, ask: { action: 'get_prompt', name }, args },
      s,
      ctx,
      `prompt not found: ${name.slice(0, 128)}`,
      (surface, c) => surface.getPrompt(name, args, c),
    );
  }

  async readResource(uri: string, ctx: CallContext): Promise<Record<string, unknown>> {
    const s = this.seen(ctx).find((x) => x.surface.ownsUri(uri));
    return this.run(
      { tool: RESOURCE_READ, target: uri, ask: { action: 'read_resource', uri }, args: {} },
      s,
      ctx,
      `resource not found: ${uri.slice(0, 300)}`,
      (surface, c) => surface.readResource(uri, c),
    );
  }

  /** What the surfaces this caller sees offer beyond their lists: the server's capabilities say so only then. */
  offers(ctx: CallContext): SurfaceOffers {
    const all = this.seen(ctx).map((s) => s.surface.offers?.());
    return { completions: all.some((o) => o?.completions), subscribe: all.some((o) => o?.subscribe) };
  }

  /**
   * logging/setLevel sent on to each surface the caller sees that offers logging (held by `holder`, its token);
   * says which were sent it, which have no logging (nothing is sent to them, nothing claimed for them) and
   * which failed to take it. Not audited, like listing.
   */
  async setLogLevel(
    level: string,
    holder: string,
    ctx: CallContext,
  ): Promise<{ sent_to: string[]; without_logging: string[]; failed: string[] }> {
    const out = { sent_to: [] as string[], without_logging: [] as string[], failed: [] as string[] };
    for (const s of this.seen(ctx)) {
      if (s.kind !== 'upstream') continue;
      if (!s.surface.setLogLevel || !s.surface.offers?.().logging) {
        out.without_logging.push(s.plugin);
        continue;
      }
      const ok = await s.surface.setLogLevel(holder, level).then(
        () => true,
        () => false,
      );
      (ok ? out.sent_to : out.failed).push(s.plugin);
    }
    return out;
  }

  /** The instructions of the surfaces this caller sees, each under its plugin's id, in the order of the ids. */
  instructions(ctx: CallContext): Array<{ id: string; text: string }> {
    return this.seen(ctx)
      .flatMap((s) => {
        const text = s.surface.instructions?.();
        return text ? [{ id: s.plugin, text }] : [];
      })
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /**
   * completion/complete for a prompt or resource template the caller sees, sent to the surface that owns it.
   * The policy decides it as it decides getting that prompt or reading that template's resources; it is not
   * audited (a client completes as a person types, like listing). One not seen answers not_found.
   */
  async complete(request: CompletionRequest, ctx: CallContext): Promise<Record<string, unknown>> {
    const { ref } = request;
    const target = ref.type === 'ref/prompt' ? ref.name : ref.uri;
    const s = this.seen(ctx).find((x) =>
      ref.type === 'ref/prompt' ? x.surface.ownsPrompt(ref.name) : x.surface.ownsUri(ref.uri),
    );
    if (!s?.surface.complete || !s.surface.offers?.().completions)
      throw new GatehouseError(
        'not_found',
        `${ref.type === 'ref/prompt' ? 'prompt' : 'resource template'} not found: ${target.slice(0, 300)}`,
        ref.type === 'ref/prompt' ? { name: ref.name.slice(0, 128) } : { uri: ref.uri.slice(0, 300) },
      );
    const refusal = await this.deps.policy?.maySurface(
      ref.type === 'ref/prompt' ? { action: 'get_prompt', name: ref.name } : { action: 'read_resource', uri: ref.uri },
      ctx,
      { plugin: s.plugin, pluginKind: s.kind, capability: s.surface.capability, feature: s.surface.feature },
      {},
    );
    if (refusal) throw new GatehouseError(refusal.refused.code, refusal.refused.message, refusal.refused.details);
    const surface = s.surface;
    return withDeadline(
      (signal) => surface.complete!(request, { ...ctx, signal }),
      this.deps.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
      ctx.signal,
      `completion/complete ${target.slice(0, 128)}`,
    );
  }

  /**
   * resources/subscribe of a surface's resource the caller sees, held by `holder` (its token, or its listen stream):
   * decided by the policy as reading it is (`read_resource`), not audited (nothing is read until it is).
   */
  async subscribe(uri: string, holder: string, ctx: CallContext): Promise<void> {
    const s = this.seen(ctx).find((x) => x.surface.ownsUri(uri));
    if (!s?.surface.subscribe || !s.surface.offers?.().subscribe)
      throw new GatehouseError('not_found', `resource not found: ${uri.slice(0, 300)}`, { uri: uri.slice(0, 300) });
    const refusal = await this.deps.policy?.maySurface(
      { action: 'read_resource', uri },
      ctx,
      { plugin: s.plugin, pluginKind: s.kind, capability: s.surface.capability, feature: s.surface.feature },
      {},
    );
    if (refusal) throw new GatehouseError(refusal.refused.code, refusal.refused.message, refusal.refused.details);
    const surface = s.surface;
    await withDeadline(
      (signal) => surface.subscribe!(uri, holder, { ...ctx, signal }),
      this.deps.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
      ctx.signal,
      `resources/subscribe ${uri.slice(0, 128)}`,
    );
  }

  /** Ends `holder`'s subscription, whoever sees the surface now (a subscription is never left behind). */
  async unsubscribe(uri: string, holder: string): Promise<void> {
    for (const p of this.deps.registry.listPlugins())
      if (p.surface?.ownsUri(uri)) await p.surface.unsubscribe?.(uri, holder);
  }

  private seen(ctx: CallContext): Seen[] {
    const all = this.deps.registry.surfaces(viewerOf(ctx));
    return this.plugin === undefined ? all : all.filter((s) => s.plugin === this.plugin);
  }

  private async run(
    what: {
      tool: string;
      target: string;
      ask: { action: 'get_prompt'; name: string } | { action: 'read_resource'; uri: string };
      args: Record<string, unknown>;
    },
    s: Seen | undefined,
    ctx: CallContext,
    missing: string,
    go: (surface: PluginSurface, ctx: CallContext) => Promise<Record<string, unknown>>,
  ): Promise<Record<string, unknown>> {
    const started = this.deps.clock.now();
    const audit = (f: Partial<AuditFacts> & Pick<AuditFacts, 'result'>) =>
      this.deps.auditor.record(
        {
          tool: what.tool,
          write: false,
          target: what.target,
          duration_ms: this.deps.clock.now() - started,
          ...(s ? { source_plugin: s.plugin, feature_key: s.surface.feature } : {}),
          ...f,
        },
        actorOf(ctx),
      );
    if (!s) {
      audit({ result: 'denied', error_code: 'not_found' });
      throw new GatehouseError(
        'not_found',
        missing,
        what.tool === RESOURCE_READ ? { uri: what.target.slice(0, 300) } : { name: what.target.slice(0, 128) },
      );
    }
    const refusal = await this.deps.policy?.maySurface(
      what.ask,
      ctx,
      { plugin: s.plugin, pluginKind: s.kind, capability: s.surface.capability, feature: s.surface.feature },
      what.args,
    );
    if (refusal) {
      audit({ result: 'denied', error_code: refusal.refused.code, policy: refusal.policies });
      throw new GatehouseError(refusal.refused.code, refusal.refused.message, refusal.refused.details);
    }
    const source = this.deps.entitlements();
    const { entitlement } = source.decide
      ? await source.decide(s.surface.feature)
      : { entitlement: await source.check(s.surface.feature) };
    if (!entitlement.allowed) {
      audit({ result: 'denied', error_code: 'entitlement_required' });
      throw new GatehouseError(
        'entitlement_required',
        `${what.target.slice(0, 128)} needs the '${entitlement.plan}' plan (feature ${s.surface.feature}); upgrade the license in Gatehouse to use it`,
        { feature: s.surface.feature, required_plan: entitlement.plan },
      );
    }
    try {
      const out = await withDeadline(
        (signal) => go(s.surface, { ...ctx, signal }),
        this.deps.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
        ctx.signal,
        `${what.tool} ${what.target.slice(0, 128)}`,
      );
      audit({ result: 'ok' });
      return out;
    } catch (e) {
      audit({ result: 'error', error_code: codeOf(e) });
      throw e;
    }
  }
}
